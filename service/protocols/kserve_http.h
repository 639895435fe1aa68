// KServe's Open Inference Protocol (v2; also Triton's and Seldon MLServer's
// HTTP API) on the server's HTTP port, so that KServe, perf_analyzer,
// tritonclient's HTTP client or plain requests reach a model as they reach
// any v2 server. Always on: its /v2/ routes collide with nothing.
//
//   GET  /v2/health/live, /v2/health/ready     {"live": true} / {"ready": ...} (503 when not)
//   GET  /v2                                   server metadata
//   GET  /v2/models/{m}[/versions/{v}]         model metadata: inputs and outputs
//   GET  /v2/models/{m}[/versions/{v}]/ready   {"name", "ready"}
//   POST /v2/models/{m}[/versions/{v}]/infer   an inference request
//
// A model takes `text` (BYTES, [-1]) and optionally `text_pair` (BYTES,
// [-1], one per text), or token ids: `input_ids` (INT64, [-1, -1]) with
// optional `attention_mask` (its zeros mark padding, cut from each row)
// and `token_type_ids` (same shape). Its outputs follow its head:
//   sequence classifier (a reranker too): `logits` and `probabilities`
//     (FP32, [batch, labels]) and `label` (BYTES, [batch]: the best label);
//   token classifier: `entities` (BYTES, [batch]): per input one JSON text,
//     the list of {label, score, start, end, word} (aggregation simple; the
//     request parameter `aggregation_strategy` chooses another);
//   masked language model only: `fill_mask` (BYTES, [batch]): per input one
//     JSON text, per mask the list of {token_id, token, score, sequence}
//     (request parameter `top_k`, default 5).
// A request's `outputs` names which to return (all by default). Tensors'
// data may be flat (row-major) or nested. {v} must be the served version.
// Errors are {"error": ...} with the HTTP status of the gRPC code. Each
// request is calls on the in-process channel, protocol "kserve".
#ifndef DEBERTA_SERVICE_PROTOCOLS_KSERVE_HTTP_H_
#define DEBERTA_SERVICE_PROTOCOLS_KSERVE_HTTP_H_

#include <grpcpp/channel.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace deberta::service {

// Registers the routes; `channel` is the server's in-process channel.
// `server_version` is reported by GET /v2.
void AddKserveRoutes(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel, std::string server_version);

// Their OpenAPI path items.
nlohmann::json KserveOpenApi();

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_KSERVE_HTTP_H_
