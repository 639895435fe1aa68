// Cohere's rerank API (v2), which vLLM, OpenVINO Model Server and Jina also
// speak, on the server's HTTP port: POST /v2/rerank with `model`, `query`,
// `documents` (strings, or objects with `text`), `top_n`,
// `return_documents` and `max_tokens_per_doc`, answered with
// results[{index, relevance_score, document?}] and `meta` (the tokens run,
// as billed units). Scores follow Cohere's rule: relevance in [0, 1], the
// sigmoid of the reranker's logit; a long document is cut to
// max_tokens_per_doc (and to the model's length), never refused. Errors are
// {"message": ...} with the HTTP status of the gRPC code. The work is a
// Rerank call on the server's in-process channel, protocol "cohere".
#ifndef DEBERTA_SERVICE_PROTOCOLS_COHERE_RERANK_H_
#define DEBERTA_SERVICE_PROTOCOLS_COHERE_RERANK_H_

#include <grpcpp/channel.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>

namespace deberta::service {

inline constexpr char kCohereRerankPath[] = "/v2/rerank";

// Registers POST /v2/rerank; `channel` is the server's in-process channel.
void AddCohereRerankRoute(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel);

// Its OpenAPI path item, for the server's document.
nlohmann::json CohereRerankOpenApi();

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_COHERE_RERANK_H_
