// TEI's HTTP routes: bodies to tei_api.h's mapping, its answers back with TEI's
// headers and error bodies; their OpenAPI items.
#include "service/protocols/tei_http.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "service/protocols/in_process_call.h"
#include "service/protocols/json_fields.h"
#include "service/protocols/openapi_operation.h"
#include "service/protocols/tei_api.h"
#include "service/status_util.h"

namespace deberta::service {
namespace {

namespace pb = serving::v1;
using Stub = pb::InferenceService::Stub;
using json = nlohmann::json;

// TEI's error types and statuses.
void WriteError(httplib::Response& response, const absl::Status& status) {
  const char* type = "Backend";
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument: response.status = 422; type = "Validation"; break;
    case absl::StatusCode::kFailedPrecondition: response.status = 424; type = "Backend"; break;
    case absl::StatusCode::kResourceExhausted: response.status = 429; type = "Overloaded"; break;
    case absl::StatusCode::kUnavailable: response.status = 503; type = "Unhealthy"; break;
    default: response.status = HttpStatusOf(status); break;
  }
  const json body = {{"error", std::string(status.message())}, {"error_type", type}};
  response.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

using Handler = absl::StatusOr<json> (*)(TeiCalls&, const json&);

void Serve(const httplib::Request& http_request, httplib::Response& http_response, Stub& stub,
           const std::string& model, Handler handler) {
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<json> body = JsonFields::ParseObject(http_request.body);
  if (!body.ok()) return WriteError(http_response, body.status());
  TeiCalls calls(http_request, Protocol::kTei, stub, model);
  absl::StatusOr<json> answer = handler(calls, *body);
  if (!answer.ok()) return WriteError(http_response, answer.status());
  const auto elapsed = std::chrono::steady_clock::now() - started;
  http_response.set_header("x-compute-time",
                           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()));
  http_response.set_header("x-compute-tokens", std::to_string(calls.timing().tokens));
  http_response.set_header("x-compute-characters", std::to_string(calls.characters));
  http_response.set_header("x-queue-time", std::to_string(calls.timing().queue_micros / 1000));
  http_response.set_header("x-inference-time", std::to_string(calls.timing().inference_micros / 1000));
  http_response.set_content(answer->dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// The routes at `prefix` ("" for the root); `model_group` is the regex
// group of the model's name in `prefix`, or 0 for the server's only model.
void AddRoutesAt(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel, const std::string& prefix,
                 int model_group) {
  auto stub = std::make_shared<Stub>(channel);
  auto model_of = [model_group](const httplib::Request& request) {
    return model_group == 0 ? std::string() : request.matches[model_group].str();
  };
  const std::pair<const char*, Handler> posts[] = {
      {"/predict", &TeiPredict}, {"/rerank", &TeiRerank}, {"/tokenize", &TeiTokenize}, {"/decode", &TeiDecode}};
  for (const auto& [path, handler] : posts) {
    routes.Post(absl::StrCat("^", prefix, path, "$"),
                [stub, model_of, handler = handler](const httplib::Request& request, httplib::Response& response) {
                  Serve(request, response, *stub, model_of(request), handler);
                });
  }
  routes.Get(absl::StrCat("^", prefix, "/info$"),
             [stub, model_of](const httplib::Request& request, httplib::Response& response) {
               TeiCalls calls(request, Protocol::kTei, *stub, model_of(request));
               absl::StatusOr<json> info = TeiInfo(calls);
               if (!info.ok()) return WriteError(response, info.status());
               response.set_content(info->dump(), "application/json");
             });
  // Healthy: the model (or every model) is SERVING in the gRPC health
  // service, which needs no key, as probes go.
  auto health = std::shared_ptr<grpc::health::v1::Health::Stub>(grpc::health::v1::Health::NewStub(channel));
  routes.Get(absl::StrCat("^", prefix, "/health$"),
             [health, model_of](const httplib::Request& request, httplib::Response& response) {
               if (IsServing(*health, model_of(request))) {
                 response.status = 200;
                 return;
               }
               WriteError(response, absl::UnavailableError("unhealthy"));
             });
}

}  // namespace

void AddTeiRoutes(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel, bool at_root) {
  AddRoutesAt(routes, channel, kTeiPrefix, 0);
  AddRoutesAt(routes, channel, absl::StrCat(kTeiPrefix, "/models/([^/]+)"), 1);
  if (at_root) AddRoutesAt(routes, channel, "", 0);
}

json TeiOpenApi(bool at_root) {
  const json error = {{"type", "object"},
                      {"properties",
                       {{"error", {{"type", "string"}}},
                        {"error_type",
                         {{"type", "string"}, {"enum", {"Unhealthy", "Backend", "Overloaded", "Validation", "Tokenizer"}}}}}}};
  const json truncation = {{"truncate", {{"type", "boolean"}}},
                           {"truncation_direction", {{"type", "string"}, {"enum", {"Right", "right"}}}}};
  json predict_properties = {{"inputs", {{"description", "A text, a pair [text, text_pair], or a batch of them."}}},
                             {"raw_scores", {{"type", "boolean"}}}};
  predict_properties.update(truncation);
  json rerank_properties = {{"query", {{"type", "string"}}},
                            {"texts", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                            {"raw_scores", {{"type", "boolean"}}},
                            {"return_text", {{"type", "boolean"}}}};
  rerank_properties.update(truncation);
  const json prediction = {{"type", "object"},
                           {"properties", {{"score", {{"type", "number"}}}, {"label", {{"type", "string"}}}}}};
  const json token = {{"type", "object"},
                      {"properties",
                       {{"id", {{"type", "integer"}}},
                        {"text", {{"type", "string"}}},
                        {"special", {{"type", "boolean"}}},
                        {"start", {{"type", "integer"}, {"nullable", true}}},
                        {"stop", {{"type", "integer"}, {"nullable", true}}}}}};
  const json operations[] = {
      {"/predict", AdapterPost("TeiPredict", "TEI: class scores of texts or pairs.",
                               {{"type", "object"}, {"required", {"inputs"}}, {"properties", predict_properties}},
                               {{"description", "[{score, label}] highest first, or a list of them for a batch."}}, error)},
      {"/rerank", AdapterPost("TeiRerank", "TEI: the texts by relevance to the query.",
                              {{"type", "object"}, {"required", {"query", "texts"}}, {"properties", rerank_properties}},
                              {{"type", "array"},
                               {"items",
                                {{"type", "object"},
                                 {"properties",
                                  {{"index", {{"type", "integer"}}},
                                   {"score", {{"type", "number"}}},
                                   {"text", {{"type", "string"}}}}}}}},
                              error)},
      {"/tokenize", AdapterPost("TeiTokenize", "TEI: tokens with byte offsets.",
                                {{"type", "object"},
                                 {"required", {"inputs"}},
                                 {"properties",
                                  {{"inputs", {{"description", "A text or a list of texts."}}},
                                   {"add_special_tokens", {{"type", "boolean"}}}}}},
                                {{"type", "array"}, {"items", {{"type", "array"}, {"items", token}}}}, error)},
      {"/decode", AdapterPost("TeiDecode", "TEI: texts of token ids.",
                              {{"type", "object"},
                               {"required", {"ids"}},
                               {"properties",
                                {{"ids", {{"description", "A list of ids or a list of lists."}}},
                                 {"skip_special_tokens", {{"type", "boolean"}, {"enum", {true}}}}}}},
                              {{"type", "array"}, {"items", {{"type", "string"}}}}, error)},
  };
  json paths = json::object();
  std::vector<std::string> prefixes = {kTeiPrefix};
  if (at_root) prefixes.push_back("");
  for (const std::string& prefix : prefixes) {
    for (const json& operation : operations) {
      json item = operation[1];
      if (!prefix.empty()) item["post"]["operationId"] = absl::StrCat(item["post"]["operationId"].get<std::string>(), "Prefixed");
      paths[absl::StrCat(prefix, operation[0].get<std::string>())] = std::move(item);
    }
    paths[absl::StrCat(prefix, "/info")] = {
        {"get",
         {{"operationId", absl::StrCat("TeiInfo", prefix.empty() ? "" : "Prefixed")},
          {"summary", "TEI: the model served."},
          {"tags", {kCompatibilityTag}},
          {"responses", {{"200", {{"description", "model_id, model_dtype, model_type, max_input_length, version."},
                                   {"content", JsonContent({{"type", "object"}})}}}}}}}};
    paths[absl::StrCat(prefix, "/health")] = {
        {"get",
         {{"operationId", absl::StrCat("TeiHealth", prefix.empty() ? "" : "Prefixed")},
          {"summary", "TEI: 200 while the model serves."},
          {"tags", {kCompatibilityTag}},
          {"security", json::array()},
          {"responses",
           {{"200", {{"description", "Healthy."}}},
            {"503", {{"description", "Unhealthy."}, {"content", JsonContent(error)}}}}}}}};
  }
  return paths;
}

}  // namespace deberta::service
