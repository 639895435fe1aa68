// absl::Status -> grpc::Status.
#include "service/status_util.h"

namespace deberta::service {

constexpr size_t kMaxMessageBytes = 1024;

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  std::string message(status.message());
  if (message.size() > kMaxMessageBytes) {
    message.resize(kMaxMessageBytes - 3);
    message += "...";
  }
  // absl and gRPC share the canonical code numbering.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message);
}

int HttpStatusFromCode(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return 200;
    case grpc::StatusCode::CANCELLED: return 499;
    case grpc::StatusCode::INVALID_ARGUMENT: return 400;
    case grpc::StatusCode::FAILED_PRECONDITION: return 400;
    case grpc::StatusCode::OUT_OF_RANGE: return 400;
    case grpc::StatusCode::UNAUTHENTICATED: return 401;
    case grpc::StatusCode::PERMISSION_DENIED: return 403;
    case grpc::StatusCode::NOT_FOUND: return 404;
    case grpc::StatusCode::ALREADY_EXISTS: return 409;
    case grpc::StatusCode::ABORTED: return 409;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return 429;
    case grpc::StatusCode::UNIMPLEMENTED: return 501;
    case grpc::StatusCode::UNAVAILABLE: return 503;
    case grpc::StatusCode::DEADLINE_EXCEEDED: return 504;
    default: return 500;  // UNKNOWN, INTERNAL, DATA_LOSS.
  }
}

std::string GrpcCodeName(grpc::StatusCode code) {
  std::string name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  return name.empty() ? "UNKNOWN" : name;
}

int HttpStatusOf(const absl::Status& status) {
  return HttpStatusFromCode(static_cast<grpc::StatusCode>(status.code()));
}

}  // namespace deberta::service
