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

#include "absl/status/status.h"
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

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_IN_PROCESS_CALL_H_
