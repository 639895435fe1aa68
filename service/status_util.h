// The one place absl::Status becomes grpc::Status.
#ifndef DEBERTA_SERVICE_STATUS_UTIL_H_
#define DEBERTA_SERVICE_STATUS_UTIL_H_

#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"

namespace deberta::service {

// Same code; the message is truncated to a size safe for trailers.
grpc::Status ToGrpcStatus(const absl::Status& status);

// "OK", "INVALID_ARGUMENT", ... as used in the requests metric.
std::string GrpcCodeName(grpc::StatusCode code);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_STATUS_UTIL_H_
