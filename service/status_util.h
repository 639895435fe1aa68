// The one place statuses are converted: absl::Status to grpc::Status, and
// status codes to HTTP statuses.
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

// The HTTP status of a code, as Google's API design guide maps them
// (INVALID_ARGUMENT 400, UNAUTHENTICATED 401, RESOURCE_EXHAUSTED 429,
// CANCELLED 499, UNAVAILABLE 503, DEADLINE_EXCEEDED 504, ...).
int HttpStatusFromCode(grpc::StatusCode code);

// The same for a status of our own (the HTTP adapters' answers).
int HttpStatusOf(const absl::Status& status);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_STATUS_UTIL_H_
