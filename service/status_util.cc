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

std::string GrpcCodeName(grpc::StatusCode code) {
  std::string name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  return name.empty() ? "UNKNOWN" : name;
}

}  // namespace deberta::service
