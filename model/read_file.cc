// ReadFileToString.
#include "model/read_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace deberta::model {

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace deberta::model
