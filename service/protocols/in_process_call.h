// What every HTTP protocol of the server (our JSON API and the adapters for
// other APIs: Hugging Face, TEI, Cohere, KServe) does with a request before
// it becomes a call on the server's in-process gRPC channel: the API key,
// the traceparent and the deadline go with it, and so do the HTTP peer and
// the protocol's name, which label the metrics and the access log. So each
// protocol meets the same batcher, limits, keys, metrics and log as gRPC.
#ifndef DEBERTA_SERVICE_PROTOCOLS_IN_PROCESS_CALL_H_
#define DEBERTA_SERVICE_PROTOCOLS_IN_PROCESS_CALL_H_

#include <grpcpp/client_context.h>
#include <httplib.h>

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "service/endpoint.h"

namespace deberta::service {

// Metadata the HTTP protocols add to their in-process calls, for the
// metrics and the access log; honoured only on in-process calls.
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

// Copies `request`'s authorization and traceparent headers, its deadline
// (the X-Deadline-Ms header or the deadline_ms parameter) and peer, and
// `protocol`, onto `context`. InvalidArgument for a deadline that is not a
// positive number of milliseconds.
absl::Status PrepareInProcessContext(const httplib::Request& request, Protocol protocol,
                                     grpc::ClientContext* context);

// A finished call's status as an absl::Status (same code and message).
absl::Status FromGrpcStatus(const grpc::Status& status);

// The timing metadata of a finished call.
InProcessTiming TimingOf(const grpc::ClientContext& context);

// One unary call of `stub`'s `method` for an HTTP request of `protocol`:
// the context prepared as above, then the call. The call's status, or the
// deadline's error; with `timing`, the call's timing metadata.
template <typename Stub, typename Request, typename Response>
absl::Status CallInProcess(const httplib::Request& http_request, Protocol protocol, Stub& stub,
                           grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                           const Request& request, Response* response, InProcessTiming* timing = nullptr) {
  grpc::ClientContext context;
  if (absl::Status prepared = PrepareInProcessContext(http_request, protocol, &context); !prepared.ok()) {
    return prepared;
  }
  const grpc::Status status = (stub.*method)(&context, request, response);
  if (timing != nullptr) *timing = TimingOf(context);
  return FromGrpcStatus(status);
}

// The calls one HTTP request of an adapter makes, all for one model (empty:
// the server's only one), each with the request's context as above; their
// timing metadata summed, for the adapters that report it.
class ModelCalls {
 public:
  using Stub = serving::v1::InferenceService::Stub;

  ModelCalls(const httplib::Request& http_request, Protocol protocol, Stub& stub, std::string model)
      : http_request_(http_request), protocol_(protocol), stub_(stub), model_(std::move(model)) {}

  // `request`'s model is set to this one's, then the call is made.
  template <typename Request, typename Response>
  absl::Status Run(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*), Request& request,
                   Response* response) {
    request.set_model(model_);
    InProcessTiming timing;
    absl::Status status = CallInProcess(http_request_, protocol_, stub_, method, request, response, &timing);
    timing_.queue_micros += timing.queue_micros;
    timing_.inference_micros += timing.inference_micros;
    timing_.tokens += timing.tokens;
    return status;
  }

  const std::string& model() const { return model_; }
  const InProcessTiming& timing() const { return timing_; }

 private:
  const httplib::Request& http_request_;
  const Protocol protocol_;
  Stub& stub_;
  const std::string model_;
  InProcessTiming timing_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_IN_PROCESS_CALL_H_
