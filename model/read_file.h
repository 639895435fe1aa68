// Reading a whole file into memory, with a status instead of an exception.
#ifndef DEBERTA_MODEL_READ_FILE_H_
#define DEBERTA_MODEL_READ_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace deberta::model {

// The bytes of `path`; NotFound naming it when it cannot be opened.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_READ_FILE_H_
