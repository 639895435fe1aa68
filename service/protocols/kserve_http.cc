// The Open Inference Protocol's (v2) REST routes over kserve_api.h's
// mapping, and their OpenAPI items.
#include "service/protocols/kserve_http.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "service/protocols/in_process_call.h"
#include "service/protocols/kserve_api.h"
#include "service/protocols/json_fields.h"
#include "service/protocols/openapi_operation.h"

namespace deberta::service {
namespace {

namespace pb = serving::v1;
using Stub = pb::InferenceService::Stub;
using HealthStub = grpc::health::v1::Health::Stub;
using json = nlohmann::json;

constexpr char kModelPath[] = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";

}  // namespace

void AddKserveRoutes(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel, std::string server_version) {
  auto stub = std::make_shared<Stub>(channel);
  auto health = std::shared_ptr<HealthStub>(grpc::health::v1::Health::NewStub(channel));
  routes.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(R"({"live":true})", "application/json");
  });
  routes.Get("/v2/health/ready", [health](const httplib::Request&, httplib::Response& response) {
    const bool ready = IsServing(*health, "");
    response.status = ready ? 200 : 503;
    response.set_content(json{{"ready", ready}}.dump(), "application/json");
  });
  routes.Get("/v2", [server_version](const httplib::Request&, httplib::Response& response) {
    response.set_content(json{{"name", "deberta-serve"}, {"version", server_version}, {"extensions", json::array()}}.dump(),
                         "application/json");
  });
  routes.Get(absl::StrCat("^", kModelPath, "$"), [stub](const httplib::Request& request, httplib::Response& response) {
    ModelCalls calls(request, Protocol::kKserve, *stub, request.matches[1].str());
    WriteAnswer(response, KserveModelMetadata(calls, request.matches[2].str()));
  });
  routes.Get(absl::StrCat("^", kModelPath, "/ready$"),
             [stub, health](const httplib::Request& request, httplib::Response& response) {
               ModelCalls calls(request, Protocol::kKserve, *stub, request.matches[1].str());
               absl::StatusOr<bool> ready = KserveModelReady(calls, *health, request.matches[2].str());
               if (!ready.ok()) return WriteAnswer(response, ready.status());
               response.status = *ready ? 200 : 503;
               response.set_content(json{{"name", calls.model()}, {"ready", *ready}}.dump(), "application/json");
             });
  routes.Post(absl::StrCat("^", kModelPath, "/infer$"), [stub](const httplib::Request& request, httplib::Response& response) {
    ModelCalls calls(request, Protocol::kKserve, *stub, request.matches[1].str());
    absl::StatusOr<json> body = JsonFields::ParseObject(request.body);
    WriteAnswer(response, body.ok() ? KserveInfer(calls, request.matches[2].str(), *body) : body.status());
  });
}

json KserveOpenApi() {
  const json error = {{"type", "object"}, {"properties", {{"error", {{"type", "string"}}}}}};
  const json tensor = {{"type", "object"},
                       {"required", {"name", "shape", "datatype"}},
                       {"properties",
                        {{"name", {{"type", "string"}}},
                         {"shape", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
                         {"datatype", {{"type", "string"}}},
                         {"parameters", {{"type", "object"}}},
                         {"data", {{"description", "The values, flat (row-major) or nested."}}}}}};
  const json request = {{"type", "object"},
                        {"required", {"inputs"}},
                        {"properties",
                         {{"id", {{"type", "string"}}},
                          {"parameters", {{"type", "object"}, {"description", "aggregation_strategy, top_k."}}},
                          {"inputs", {{"type", "array"}, {"items", tensor}}},
                          {"outputs",
                           {{"type", "array"},
                            {"items", {{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}}}}}}}};
  const json answer = {{"type", "object"},
                       {"properties",
                        {{"model_name", {{"type", "string"}}},
                         {"model_version", {{"type", "string"}}},
                         {"id", {{"type", "string"}}},
                         {"outputs", {{"type", "array"}, {"items", tensor}}}}}};
  auto get = [](const std::string& id, const std::string& summary, bool needs_key) {
    json operation = {{"operationId", id},
                      {"summary", summary},
                      {"tags", {kCompatibilityTag}},
                      {"responses", {{"200", {{"description", "The answer."}, {"content", JsonContent({{"type", "object"}})}}}}}};
    if (!needs_key) operation["security"] = json::array();
    return json{{"get", std::move(operation)}};
  };
  const json model = PathParameter("model", "The model's name (ListModels).");
  const json version = PathParameter("version", "The served version (GET /v1/models).");
  json infer = AdapterPost("KserveInfer", "Open Inference Protocol v2: infer.", request, answer, error);
  infer["post"]["parameters"] = {model};
  json infer_version = AdapterPost("KserveInferVersion", "Open Inference Protocol v2: infer, a version named.",
                                   request, answer, error);
  infer_version["post"]["parameters"] = {model, version};
  json metadata = get("KserveModelMetadata", "Open Inference Protocol v2: the model's inputs and outputs.", true);
  metadata["get"]["parameters"] = {model};
  json metadata_version = get("KserveModelVersionMetadata", "The same, a version named.", true);
  metadata_version["get"]["parameters"] = {model, version};
  json ready = get("KserveModelReady", "Open Inference Protocol v2: whether the model is ready.", false);
  ready["get"]["parameters"] = {model};
  json ready_version = get("KserveModelVersionReady", "The same, a version named.", false);
  ready_version["get"]["parameters"] = {model, version};
  return {{"/v2/health/live", get("KserveLive", "Open Inference Protocol v2: the server is live.", false)},
          {"/v2/health/ready", get("KserveReady", "Open Inference Protocol v2: every model is ready.", false)},
          {"/v2", get("KserveServerMetadata", "Open Inference Protocol v2: server metadata.", false)},
          {"/v2/models/{model}", std::move(metadata)},
          {"/v2/models/{model}/versions/{version}", std::move(metadata_version)},
          {"/v2/models/{model}/ready", std::move(ready)},
          {"/v2/models/{model}/versions/{version}/ready", std::move(ready_version)},
          {"/v2/models/{model}/infer", std::move(infer)},
          {"/v2/models/{model}/versions/{version}/infer", std::move(infer_version)}};
}

}  // namespace deberta::service
