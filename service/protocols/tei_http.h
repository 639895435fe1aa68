// text-embeddings-inference's HTTP API (TEI, Hugging Face's server for
// embedding, classifier and reranker models) for the routes that fit our
// tasks, so that a client written for a TEI deployment works unchanged:
//
//   POST /predict   {inputs: a text, a pair [a, b], or a batch [[a], [a, b], ...],
//                    raw_scores, truncate, truncation_direction}
//                   -> [{score, label}] (all labels, highest first; a list per
//                   input for a batch)
//   POST /rerank    {query, texts, raw_scores, return_text, truncate,
//                    truncation_direction} -> [{index, score, text?}], highest first
//   POST /tokenize  {inputs: a text or a list, add_special_tokens}
//                   -> [[{id, text, special, start, stop}]] (byte offsets)
//   POST /decode    {ids: a list or a list of lists, skip_special_tokens} -> [text]
//   GET  /info      the model: id, dtype, type (classifier or reranker, with
//                   its labels), limits, version
//   GET  /health    200 while the model serves, else 503
//
// under /tei (the server's only model) and /tei/models/{model}, and at the
// root with --tei_compatible_routes. Where TEI's rule differs from ours, the
// routes follow TEI's: /predict scores are the softmax of the logits for
// any model with several labels (TEI's classifier head, whatever the
// problem type) and their sigmoid for one label; `truncate` absent means
// the server's --truncate (TEI's --auto-truncate, reported as
// auto_truncate). Not served: truncation_direction Left, decoding with
// special tokens, the embedding routes (no embedding model here). Errors
// are {"error", "error_type"} with TEI's statuses: 422 Validation (bad
// input), 424 Backend (a model without that head), 429 Overloaded, 503
// Unhealthy, and 401, 404, 504 as their gRPC codes. Answers carry TEI's
// headers x-compute-time, x-compute-tokens, x-compute-characters,
// x-queue-time and x-inference-time (milliseconds, from the server's own
// timing of the call). Each request is calls on the in-process channel,
// protocol "tei".
#ifndef DEBERTA_SERVICE_PROTOCOLS_TEI_HTTP_H_
#define DEBERTA_SERVICE_PROTOCOLS_TEI_HTTP_H_

#include <grpcpp/channel.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>

namespace deberta::service {

inline constexpr char kTeiPrefix[] = "/tei";

// Registers the routes under /tei and /tei/models/{model}, and at the root
// too when `at_root`; `channel` is the server's in-process channel.
void AddTeiRoutes(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel, bool at_root);

// Their OpenAPI path items (under /tei; at the root too when `at_root`).
nlohmann::json TeiOpenApi(bool at_root);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_TEI_HTTP_H_
