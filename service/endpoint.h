// Endpoint: the one type that names an RPC of the inference service, used
// by the batcher (one queue per batched endpoint), the metrics (label
// values) and the handlers; Protocol: how the call arrived.
#ifndef DEBERTA_SERVICE_ENDPOINT_H_
#define DEBERTA_SERVICE_ENDPOINT_H_

namespace deberta::service {

// The batched endpoints come first, so that they index the batcher's queues.
enum class Endpoint {
  kClassify = 0,
  kFillMask = 1,
  kGetModelInfo = 2,
  kTokenize = 3,
  kDetokenize = 4,
  kZeroShotClassify = 5,  // Its sequences go through the classify queue.
};
inline constexpr int kNumEndpoints = 6;
// kClassify and kFillMask: the endpoints whose work goes through the batcher.
inline constexpr int kNumBatchedEndpoints = 2;

inline bool IsBatched(Endpoint endpoint) {
  return static_cast<int>(endpoint) < kNumBatchedEndpoints;
}

// "classify", "fill_mask", "get_model_info", "tokenize", "detokenize",
// "zero_shot_classify": the `endpoint` label value.
const char* EndpointName(Endpoint endpoint);

// How a call reached the service: gRPC from the network, or the HTTP/JSON
// API (json_api.h), whose requests are in-process gRPC calls.
enum class Protocol { kGrpc = 0, kHttp = 1 };
inline constexpr int kNumProtocols = 2;

// "grpc" or "http": the `protocol` label value and access log field.
const char* ProtocolName(Protocol protocol);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_ENDPOINT_H_
