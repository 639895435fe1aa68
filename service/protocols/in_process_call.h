// What every protocol of the server other than its own gRPC API (our JSON
// API and the adapters for other APIs: Hugging Face, TEI, Cohere, KServe,
// over HTTP or gRPC) does with a request before it becomes a call on the
// server's in-process gRPC channel: the API key, the traceparent and the
// deadline go with it (and a gRPC caller's cancellation), and so do the
// caller's address and the protocol's name, which label the metrics and
// the access log. So each protocol meets the same batcher, limits, keys,
// metrics and log as gRPC.
#ifndef DEBERTA_SERVICE_PROTOCOLS_IN_PROCESS_CALL_H_
#define DEBERTA_SERVICE_PROTOCOLS_IN_PROCESS_CALL_H_

#include <grpcpp/client_context.h>
#include <grpcpp/server_context.h>
#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "service/endpoint.h"

namespace deberta::service {

// Metadata the protocols add to their in-process calls, for the metrics
// and the access log (the "HTTP peer" is any adapter's caller); honoured
// only on in-process calls.
inline constexpr char kProtocolMetadata[] = "x-deberta-protocol";
inline constexpr char kHttpPeerMetadata[] = "x-deberta-http-peer";
// Trailing metadata of in-process calls for the adapters that report them:
// the call's longest wait in the batcher and longest engine time, in
// microseconds, and the tokens it scheduled.
inline constexpr char kQueueMicrosMetadata[] = "x-deberta-queue-us";
inline constexpr char kInferenceMicrosMetadata[] = "x-deberta-inference-us";
inline constexpr char kTokensMetadata[] = "x-deberta-tokens";

// What those say of one call (zeros when absent).
struct InProcessTiming {
  int64_t queue_micros = 0;
  int64_t inference_micros = 0;
  int64_t tokens = 0;
};

// Where an adapter's request came from: what each of its in-process calls
// carries. Copyable; a gRPC origin must not outlive its call.
class CallOrigin {
 public:
  // An HTTP request: its authorization and traceparent headers, its
  // deadline (the X-Deadline-Ms header or the deadline_ms parameter) and
  // its peer. A deadline that is not a positive number of milliseconds
  // makes every call of this origin fail with InvalidArgument.
  static CallOrigin FromHttp(const httplib::Request& request, Protocol protocol);
  // A gRPC call of an adapter's service: its authorization and traceparent
  // metadata and its peer; its deadline and cancellation propagate.
  static CallOrigin FromGrpc(const grpc::CallbackServerContext& context, Protocol protocol);

  // The context of one in-process call of this origin.
  absl::StatusOr<std::unique_ptr<grpc::ClientContext>> NewContext() const;

 private:
  CallOrigin() = default;

  std::vector<std::pair<std::string, std::string>> metadata_;
  std::optional<std::chrono::system_clock::time_point> deadline_;
  absl::Status error_;
  const grpc::CallbackServerContext* parent_ = nullptr;
};

// Whether `model` (empty: every model, the server) is SERVING in the gRPC
// health service on the in-process channel, which needs no key, as probes go.
bool IsServing(grpc::health::v1::Health::Stub& health, const std::string& model);

// A finished call's status as an absl::Status (same code and message).
absl::Status FromGrpcStatus(const grpc::Status& status);

// The timing metadata of a finished call.
InProcessTiming TimingOf(const grpc::ClientContext& context);

// One unary call of `stub`'s `method` for a request of `origin`: the
// call's status, or the origin's error; with `timing`, the call's timing
// metadata.
template <typename Stub, typename Request, typename Response>
absl::Status CallInProcess(const CallOrigin& origin, Stub& stub,
                           grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                           const Request& request, Response* response, InProcessTiming* timing = nullptr) {
  absl::StatusOr<std::unique_ptr<grpc::ClientContext>> context = origin.NewContext();
  if (!context.ok()) return context.status();
  const grpc::Status status = (stub.*method)(context->get(), request, response);
  if (timing != nullptr) *timing = TimingOf(**context);
  return FromGrpcStatus(status);
}

// The calls one request of an adapter makes, all for one model (empty: the
// server's only one), each with the request's origin as above; their
// timing metadata summed, for the adapters that report it.
class ModelCalls {
 public:
  using Stub = serving::v1::InferenceService::Stub;

  ModelCalls(CallOrigin origin, Stub& stub, std::string model)
      : origin_(std::move(origin)), stub_(stub), model_(std::move(model)) {}
  ModelCalls(const httplib::Request& http_request, Protocol protocol, Stub& stub, std::string model)
      : ModelCalls(CallOrigin::FromHttp(http_request, protocol), stub, std::move(model)) {}

  // `request`'s model is set to this one's, then the call is made.
  template <typename Request, typename Response>
  absl::Status Run(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*), Request& request,
                   Response* response) {
    request.set_model(model_);
    InProcessTiming timing;
    absl::Status status = CallInProcess(origin_, stub_, method, request, response, &timing);
    timing_.queue_micros += timing.queue_micros;
    timing_.inference_micros += timing.inference_micros;
    timing_.tokens += timing.tokens;
    return status;
  }

  const std::string& model() const { return model_; }
  const InProcessTiming& timing() const { return timing_; }

 private:
  const CallOrigin origin_;
  Stub& stub_;
  const std::string model_;
  InProcessTiming timing_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_IN_PROCESS_CALL_H_
