// Cohere's POST /v2/rerank -> a Rerank call, and its answer back.
#include "service/protocols/cohere_rerank.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "service/protocols/in_process_call.h"
#include "service/protocols/json_fields.h"
#include "service/protocols/openapi_operation.h"

namespace deberta::service {
namespace {

namespace pb = serving::v1;
using Stub = pb::InferenceService::Stub;

struct CohereRequest {
  pb::RerankRequest rerank;
  std::vector<std::string> documents;   // For return_documents.
  bool return_documents = false;
  std::optional<int64_t> max_tokens_per_doc;
  int64_t top_n = 0;  // 0: all. Cut here, so that every document's tokens are counted.
};

// A document is a string or, as Cohere's v1 accepted, an object with `text`.
absl::StatusOr<std::string> DocumentText(const nlohmann::json& document, size_t index) {
  if (document.is_string()) return document.get<std::string>();
  if (document.is_object()) {
    auto text = document.find("text");
    if (text != document.end() && text->is_string()) return text->get<std::string>();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("documents[", index, "] must be a string or an object with a string 'text'"));
}

absl::StatusOr<CohereRequest> ParseRequest(const std::string& body) {
  absl::StatusOr<nlohmann::json> object = JsonFields::ParseObject(body);
  if (!object.ok()) return object.status();
  JsonFields fields(*object, "");
  CohereRequest out;
  absl::StatusOr<std::optional<std::string>> model = fields.String("model");
  if (!model.ok()) return model.status();
  if (*model) out.rerank.set_model(**model);
  absl::StatusOr<std::optional<std::string>> query = fields.String("query");
  if (!query.ok()) return query.status();
  if (!*query) return absl::InvalidArgumentError("query is required");
  out.rerank.set_query(**query);
  const nlohmann::json* documents = fields.Value("documents");
  if (documents == nullptr || !documents->is_array()) {
    return absl::InvalidArgumentError("documents is required: a list of strings");
  }
  for (size_t i = 0; i < documents->size(); ++i) {
    absl::StatusOr<std::string> text = DocumentText((*documents)[i], i);
    if (!text.ok()) return text.status();
    out.rerank.add_documents(*text);
    out.documents.push_back(*std::move(text));
  }
  absl::StatusOr<std::optional<int64_t>> top_n = fields.Int("top_n");
  if (!top_n.ok()) return top_n.status();
  if (*top_n) {
    if (**top_n < 1) return absl::InvalidArgumentError(absl::StrCat("top_n is ", **top_n, "; it must be >= 1"));
    out.top_n = **top_n;
  }
  absl::StatusOr<std::optional<bool>> return_documents = fields.Bool("return_documents");
  if (!return_documents.ok()) return return_documents.status();
  out.return_documents = return_documents->value_or(false);
  absl::StatusOr<std::optional<int64_t>> max_tokens = fields.Int("max_tokens_per_doc");
  if (!max_tokens.ok()) return max_tokens.status();
  if (*max_tokens && **max_tokens < 1) {
    return absl::InvalidArgumentError(absl::StrCat("max_tokens_per_doc is ", **max_tokens, "; it must be >= 1"));
  }
  out.max_tokens_per_doc = *max_tokens;
  // `priority` orders requests on Cohere's side; this server has one queue.
  if (absl::Status s = fields.NoOtherKeys({"priority"}); !s.ok()) return s;
  // Cohere cuts a long document rather than refuse it: the document alone.
  out.rerank.set_truncation(pb::TRUNCATION_ONLY_SECOND);
  return out;
}

// The pair's length that leaves the document `max_tokens` tokens: the
// query's tokens with [CLS] and [SEP], the document's, and its [SEP]; 0 (the
// model's maximum) when that is no shorter.
absl::StatusOr<int32_t> PairLengthFor(ModelCalls& calls, const std::string& query, int64_t max_tokens) {
  pb::GetModelInfoRequest info_request;
  pb::ModelInfo info;
  if (absl::Status s = calls.Run(&Stub::GetModelInfo, info_request, &info); !s.ok()) return s;
  pb::TokenizeRequest tokenize;
  tokenize.set_text(query);
  pb::TokenizeResponse tokens;
  if (absl::Status s = calls.Run(&Stub::Tokenize, tokenize, &tokens); !s.ok()) return s;
  const int64_t length = tokens.token_ids_size() + max_tokens + 1;
  return length >= info.max_sequence_length() ? 0 : static_cast<int32_t>(length);
}

// Cohere's answers carry an id; theirs are UUIDs, and so are these (v4).
std::string NewId() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  const uint64_t high = (random() & 0xffffffffffff0fffULL) | 0x4000ULL;
  const uint64_t low = (random() & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", high >> 32, (high >> 16) & 0xffff, high & 0xffff, low >> 48,
                         low & 0xffffffffffffULL);
}

nlohmann::json Answer(const CohereRequest& request, const pb::RerankResponse& response) {
  nlohmann::json results = nlohmann::json::array();
  int64_t tokens = 0;
  for (const pb::RerankResult& result : response.results()) {
    tokens += result.num_tokens();
    if (request.top_n > 0 && static_cast<int64_t>(results.size()) >= request.top_n) continue;
    nlohmann::json item = {{"index", result.index()}, {"relevance_score", result.score()}};
    if (request.return_documents) item["document"] = {{"text", request.documents[result.index()]}};
    results.push_back(std::move(item));
  }
  return {{"id", NewId()},
          {"results", std::move(results)},
          {"meta",
           {{"api_version", {{"version", "2"}}},
            {"billed_units", {{"input_tokens", tokens}}},
            {"tokens", {{"input_tokens", tokens}, {"output_tokens", 0}}}}}};
}

void Rerank(const httplib::Request& http_request, httplib::Response& http_response, Stub& stub) {
  absl::StatusOr<CohereRequest> request = ParseRequest(http_request.body);
  if (!request.ok()) return WriteAnswer(http_response, request.status(), "message");
  ModelCalls calls(http_request, Protocol::kCohere, stub, request->rerank.model());
  if (request->max_tokens_per_doc) {
    absl::StatusOr<int32_t> length = PairLengthFor(calls, request->rerank.query(), *request->max_tokens_per_doc);
    if (!length.ok()) return WriteAnswer(http_response, length.status(), "message");
    request->rerank.set_max_length(*length);
  }
  pb::RerankResponse response;
  if (absl::Status s = calls.Run(&Stub::Rerank, request->rerank, &response); !s.ok()) {
    return WriteAnswer(http_response, s, "message");
  }
  WriteAnswer(http_response, Answer(*request, response), "message");
}

}  // namespace

void AddCohereRerankRoute(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel) {
  auto stub = std::make_shared<Stub>(channel);
  routes.Post(kCohereRerankPath, [stub](const httplib::Request& request, httplib::Response& response) {
    Rerank(request, response, *stub);
  });
}

nlohmann::json CohereRerankOpenApi() {
  using json = nlohmann::json;
  const json document = {{"oneOf", {{{"type", "string"}},
                                    {{"type", "object"},
                                     {"required", {"text"}},
                                     {"properties", {{"text", {{"type", "string"}}}}}}}}};
  const json request = {
      {"type", "object"},
      {"required", {"query", "documents"}},
      {"properties",
       {{"model", {{"type", "string"}, {"description", "The model's name; empty: the server's only model."}}},
        {"query", {{"type", "string"}}},
        {"documents", {{"type", "array"}, {"items", document}}},
        {"top_n", {{"type", "integer"}, {"minimum", 1}}},
        {"return_documents", {{"type", "boolean"}}},
        {"max_tokens_per_doc", {{"type", "integer"}, {"minimum", 1}}},
        {"priority", {{"type", "integer"}, {"description", "Accepted and ignored."}}}}}};
  const json tokens = {{"type", "object"}, {"properties", {{"input_tokens", {{"type", "number"}}}}}};
  const json answer = {
      {"type", "object"},
      {"required", {"results"}},
      {"properties",
       {{"id", {{"type", "string"}}},
        {"results",
         {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"required", {"index", "relevance_score"}},
            {"properties",
             {{"index", {{"type", "integer"}}},
              {"relevance_score", {{"type", "number"}, {"minimum", 0}, {"maximum", 1}}},
              {"document", {{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}}}}}}}}},
        {"meta",
         {{"type", "object"},
          {"properties",
           {{"api_version", {{"type", "object"}, {"properties", {{"version", {{"type", "string"}}}}}}},
            {"billed_units", tokens},
            {"tokens", tokens}}}}}}}};
  const json error = {{"type", "object"}, {"properties", {{"message", {{"type", "string"}}}}}};
  return {{kCohereRerankPath,
           AdapterPost("CohereRerank",
                       "Cohere's rerank (v2): documents by relevance to the query, scores in [0, 1].", request,
                       answer, error)}};
}

}  // namespace deberta::service
