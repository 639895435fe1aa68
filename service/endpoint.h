// The route table: every RPC of the inference service in one place, as an
// Endpoint (the type the batcher's queues, the metrics and the handlers
// use) with its method in the proto, its metric label and its HTTP/JSON
// path. A new task adds its enum value and its row here. Protocol: how a
// call arrived.
#ifndef DEBERTA_SERVICE_ENDPOINT_H_
#define DEBERTA_SERVICE_ENDPOINT_H_

#include <iterator>
#include <optional>
#include <string_view>

namespace deberta::service {

// The batched endpoints come first, so that they index the batcher's queues.
enum class Endpoint {
  kClassify = 0,
  kFillMask = 1,
  kClassifyTokens = 2,
  kGetModelInfo = 3,
  kTokenize = 4,
  kDetokenize = 5,
  kZeroShotClassify = 6,  // Its sequences go through the classify queue.
  kRerank = 7,            // Its sequences go through the classify queue.
  kListModels = 8,        // The server's, not a model's.
  kLoadModel = 9,         // Admin (--model_control=explicit).
  kUnloadModel = 10,      // Admin (--model_control=explicit).
};
inline constexpr int kNumEndpoints = 11;
// kClassify, kFillMask and kClassifyTokens: the endpoints whose work goes
// through the batcher, each in its own queue.
inline constexpr int kNumBatchedEndpoints = 3;

inline bool IsBatched(Endpoint endpoint) {
  return static_cast<int>(endpoint) < kNumBatchedEndpoints;
}

// One RPC of deberta.serving.v1.InferenceService.
struct Route {
  Endpoint endpoint;
  std::string_view rpc;        // The method's name in the proto.
  const char* label;           // The `endpoint` label of the metrics, and the access log's.
  std::string_view http_path;  // The HTTP/JSON API's POST route (json_api.h, openapi.h).
};

inline constexpr Route kRoutes[] = {
    {Endpoint::kClassify, "Classify", "classify", "/v1/classify"},
    {Endpoint::kFillMask, "FillMask", "fill_mask", "/v1/fill-mask"},
    {Endpoint::kZeroShotClassify, "ZeroShotClassify", "zero_shot_classify", "/v1/zero-shot-classify"},
    {Endpoint::kClassifyTokens, "ClassifyTokens", "classify_tokens", "/v1/classify-tokens"},
    {Endpoint::kRerank, "Rerank", "rerank", "/v1/rerank"},
    {Endpoint::kTokenize, "Tokenize", "tokenize", "/v1/tokenize"},
    {Endpoint::kDetokenize, "Detokenize", "detokenize", "/v1/detokenize"},
    {Endpoint::kGetModelInfo, "GetModelInfo", "get_model_info", "/v1/model"},
    {Endpoint::kListModels, "ListModels", "list_models", "/v1/models"},
    {Endpoint::kLoadModel, "LoadModel", "load_model", "/v1/models/load"},
    {Endpoint::kUnloadModel, "UnloadModel", "unload_model", "/v1/models/unload"},
};
static_assert(std::size(kRoutes) == kNumEndpoints, "every endpoint has one route");

// Whether the endpoint's requests run on a model (its `model` field names
// it); ListModels, LoadModel and UnloadModel act on the server's models.
inline bool IsModelEndpoint(Endpoint endpoint) { return endpoint < Endpoint::kListModels; }

// Where a model's routes also are: /v1/models/{model} followed by the
// route's path without its "/v1" (/v1/models/ner/classify-tokens).
inline constexpr char kModelRoutePrefix[] = "/v1/models/";

// The `endpoint` label value: "classify", "fill_mask", ...
const char* EndpointName(Endpoint endpoint);

// The route of the proto method `rpc`; REQUIRES: the table has one.
constexpr const Route& RouteOf(std::string_view rpc) {
  for (const Route& route : kRoutes) {
    if (route.rpc == rpc) return route;
  }
  return kRoutes[0];
}

// The HTTP path of the proto method `rpc`, or empty when the table has none.
constexpr std::string_view JsonPath(std::string_view rpc) {
  for (const Route& route : kRoutes) {
    if (route.rpc == rpc) return route.http_path;
  }
  return {};
}

// How a call reached the service: our gRPC API from the network, or one of
// the HTTP protocols (service/protocols/), whose requests are in-process
// gRPC calls: our HTTP/JSON API, and the adapters that speak other servers'
// APIs (Hugging Face's Inference API, text-embeddings-inference, Cohere's
// rerank, KServe's Open Inference Protocol, whose gRPC form is in-process
// too).
enum class Protocol { kGrpc = 0, kHttp = 1, kHuggingFace = 2, kTei = 3, kCohere = 4, kKserve = 5 };
inline constexpr int kNumProtocols = 6;

// "grpc", "http", "hf", "tei", "cohere" or "kserve": the `protocol` label
// value and access log field.
const char* ProtocolName(Protocol protocol);

// The protocol of that name; nullopt for any other.
std::optional<Protocol> ProtocolFromName(std::string_view name);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_ENDPOINT_H_
