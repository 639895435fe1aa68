// An adapter's request (HTTP or gRPC) -> the contexts of its in-process gRPC calls.
#include "service/protocols/in_process_call.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/strings/str_cat.h"
#include "service/protocols/json_routes.h"

namespace deberta::service {

CallOrigin CallOrigin::FromHttp(const httplib::Request& request, Protocol protocol) {
  CallOrigin origin;
  for (const char* header : {"authorization", "traceparent"}) {
    if (request.has_header(header)) origin.metadata_.emplace_back(header, request.get_header_value(header));
  }
  origin.metadata_.emplace_back(kProtocolMetadata, ProtocolName(protocol));
  origin.metadata_.emplace_back(kHttpPeerMetadata, absl::StrCat(request.remote_addr, ":", request.remote_port));
  std::string deadline = request.get_header_value(kDeadlineHeader);
  if (deadline.empty()) deadline = request.get_param_value(kDeadlineParameter);
  if (deadline.empty()) return origin;
  int64_t ms = 0;
  if (!absl::SimpleAtoi(deadline, &ms) || ms <= 0) {
    origin.error_ = absl::InvalidArgumentError(
        absl::StrCat("the deadline must be a positive number of milliseconds, not '", deadline, "'"));
  } else {
    origin.deadline_ = std::chrono::system_clock::now() + std::chrono::milliseconds(ms);
  }
  return origin;
}

CallOrigin CallOrigin::FromGrpc(const grpc::CallbackServerContext& context, Protocol protocol) {
  CallOrigin origin;
  const auto& metadata = context.client_metadata();
  for (const char* key : {"authorization", "traceparent"}) {
    auto it = metadata.find(key);
    if (it != metadata.end()) origin.metadata_.emplace_back(key, std::string(it->second.data(), it->second.size()));
  }
  origin.metadata_.emplace_back(kProtocolMetadata, ProtocolName(protocol));
  origin.metadata_.emplace_back(kHttpPeerMetadata, context.peer());
  origin.parent_ = &context;
  return origin;
}

absl::StatusOr<std::unique_ptr<grpc::ClientContext>> CallOrigin::NewContext() const {
  if (!error_.ok()) return error_;
  // A gRPC parent's deadline and cancellation reach the in-process call.
  std::unique_ptr<grpc::ClientContext> context =
      parent_ != nullptr ? grpc::ClientContext::FromCallbackServerContext(*parent_)
                         : std::make_unique<grpc::ClientContext>();
  for (const auto& [key, value] : metadata_) context->AddMetadata(key, value);
  if (deadline_) context->set_deadline(*deadline_);
  return context;
}

bool IsServing(grpc::health::v1::Health::Stub& health, const std::string& model) {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(model.empty() ? serving::v1::InferenceService::service_full_name() : model);
  grpc::health::v1::HealthCheckResponse answer;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  return health.Check(&context, request, &answer).ok() &&
         answer.status() == grpc::health::v1::HealthCheckResponse::SERVING;
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
