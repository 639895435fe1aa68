// HTTP request -> the context of its in-process gRPC call.
#include "service/protocols/in_process_call.h"

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/strings/str_cat.h"
#include "service/protocols/json_routes.h"

namespace deberta::service {

absl::Status PrepareInProcessContext(const httplib::Request& request, Protocol protocol,
                                     grpc::ClientContext* context) {
  for (const char* header : {"authorization", "traceparent"}) {
    if (request.has_header(header)) context->AddMetadata(header, request.get_header_value(header));
  }
  context->AddMetadata(kProtocolMetadata, ProtocolName(protocol));
  context->AddMetadata(kHttpPeerMetadata, absl::StrCat(request.remote_addr, ":", request.remote_port));
  std::string deadline = request.get_header_value(kDeadlineHeader);
  if (deadline.empty()) deadline = request.get_param_value(kDeadlineParameter);
  if (deadline.empty()) return absl::OkStatus();
  int64_t ms = 0;
  if (!absl::SimpleAtoi(deadline, &ms) || ms <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the deadline must be a positive number of milliseconds, not '", deadline, "'"));
  }
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(ms));
  return absl::OkStatus();
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

InProcessTiming TimingOf(const grpc::ClientContext& context) {
  InProcessTiming timing;
  const auto& trailers = context.GetServerTrailingMetadata();
  auto read = [&trailers](const char* key, int64_t* value) {
    auto it = trailers.find(key);
    if (it != trailers.end()) (void)absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()), value);
  };
  read(kQueueMicrosMetadata, &timing.queue_micros);
  read(kInferenceMicrosMetadata, &timing.inference_micros);
  read(kTokensMetadata, &timing.tokens);
  return timing;
}

}  // namespace deberta::service
