// JSON <-> protobuf on HTTP routes, each a call on the in-process channel.
#include "service/protocols/json_api.h"

#include <google/protobuf/util/json_util.h>

#include <chrono>
#include <memory>
#include <string>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "service/protocols/in_process_call.h"
#include "service/protocols/json_routes.h"
#include "service/status_util.h"
#include "service/web/try_it_page.h"

namespace deberta::service {
namespace {

namespace pb = serving::v1;
using Stub = pb::InferenceService::Stub;

// Whether a request message has a `model` field (every model's RPC).
template <typename Request, typename = void>
inline constexpr bool kHasModel = false;
template <typename Request>
inline constexpr bool kHasModel<Request, std::void_t<decltype(std::declval<Request&>().set_model(""))>> = true;

void WriteError(httplib::Response& response, grpc::StatusCode code, const std::string& message) {
  response.status = HttpStatusFromCode(code);
  const nlohmann::json body = {{"code", GrpcCodeName(code)}, {"message", message}};
  response.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;  // 0 is a value (label id 0, pad id 0).
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

// The call of one route: JSON body -> Request (its `model` from the path
// when the route names one), the stub's `method`, Response -> JSON.
template <typename Request, typename Response>
void Call(const httplib::Request& http_request, httplib::Response& http_response, Stub& stub,
          grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
          const std::string& path_model) {
  Request request;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // A misspelt field is an error, not silently dropped.
  const std::string& body = http_request.body.empty() ? std::string("{}") : http_request.body;
  const auto parsed = google::protobuf::util::JsonStringToMessage(body, &request, options);
  if (!parsed.ok()) {
    WriteError(http_response, grpc::StatusCode::INVALID_ARGUMENT,
               absl::StrCat("the body is not a ", Request::descriptor()->full_name(),
                            " in JSON: ", std::string(parsed.message())));
    return;
  }
  if constexpr (kHasModel<Request>) {
    if (!path_model.empty()) {
      if (!request.model().empty() && request.model() != path_model) {
        WriteError(http_response, grpc::StatusCode::INVALID_ARGUMENT,
                   absl::StrCat("the path names model '", path_model, "' but the body names '", request.model(), "'"));
        return;
      }
      request.set_model(path_model);
    }
  }
  absl::StatusOr<std::unique_ptr<grpc::ClientContext>> context =
      CallOrigin::FromHttp(http_request, Protocol::kHttp).NewContext();
  if (!context.ok()) {
    WriteError(http_response, grpc::StatusCode::INVALID_ARGUMENT, std::string(context.status().message()));
    return;
  }
  Response response;
  const grpc::Status status = (stub.*method)(context->get(), request, &response);
  if (!status.ok()) {
    WriteError(http_response, status.error_code(), status.error_message());
    return;
  }
  http_response.set_content(ToJson(response), "application/json");
}

// POST at the route table's path of `rpc`; a model's RPC also at
// /v1/models/{model}/<path without /v1>.
template <typename Request, typename Response>
void AddRoute(httplib::Server& routes, std::string_view rpc, std::shared_ptr<Stub> stub,
              grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*)) {
  const std::string path(JsonPath(rpc));
  routes.Post(path, [stub, method](const httplib::Request& request, httplib::Response& response) {
    Call(request, response, *stub, method, "");
  });
  if constexpr (kHasModel<Request> && !std::is_same_v<Request, pb::LoadModelRequest> &&
                !std::is_same_v<Request, pb::UnloadModelRequest>) {
    const std::string per_model = absl::StrCat("^", kModelRoutePrefix, "([^/]+)", path.substr(3), "$");
    routes.Post(per_model, [stub, method](const httplib::Request& request, httplib::Response& response) {
      Call(request, response, *stub, method, request.matches[1].str());
    });
  }
}

// Serves a file of the try-it page. The policy allows only the page's own
// script, style and API calls: nothing inline, nothing from elsewhere, no
// framing.
void AddStaticRoute(httplib::Server& routes, const char* path, std::string_view content, const char* type) {
  routes.Get(path, [content, type](const httplib::Request&, httplib::Response& response) {
    response.set_header("Content-Security-Policy",
                        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    response.set_header("X-Content-Type-Options", "nosniff");
    response.set_header("Cache-Control", "no-cache");
    response.set_content(content.data(), content.size(), type);
  });
}

}  // namespace

void AddJsonApiRoutes(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel, std::string openapi_document) {
  auto stub = std::make_shared<Stub>(channel);
  AddRoute(routes, "Classify", stub, &Stub::Classify);
  AddRoute(routes, "FillMask", stub, &Stub::FillMask);
  AddRoute(routes, "ZeroShotClassify", stub, &Stub::ZeroShotClassify);
  AddRoute(routes, "ClassifyTokens", stub, &Stub::ClassifyTokens);
  AddRoute(routes, "Rerank", stub, &Stub::Rerank);
  AddRoute(routes, "Tokenize", stub, &Stub::Tokenize);
  AddRoute(routes, "Detokenize", stub, &Stub::Detokenize);
  AddRoute(routes, "GetModelInfo", stub, &Stub::GetModelInfo);
  AddRoute(routes, "ListModels", stub, &Stub::ListModels);
  AddRoute(routes, "LoadModel", stub, &Stub::LoadModel);
  AddRoute(routes, "UnloadModel", stub, &Stub::UnloadModel);
  // The list and a model's description are also GETs.
  routes.Get(JsonPath("ListModels").data(), [stub](const httplib::Request& request, httplib::Response& response) {
    Call(request, response, *stub, &Stub::ListModels, "");
  });
  routes.Get(absl::StrCat("^", kModelRoutePrefix, "([^/]+)$"),
             [stub](const httplib::Request& request, httplib::Response& response) {
               Call(request, response, *stub, &Stub::GetModelInfo, request.matches[1].str());
             });
  routes.Get(kOpenApiPath, [document = std::move(openapi_document)](const httplib::Request&,
                                                                    httplib::Response& response) {
    response.set_content(document, "application/json");
  });
  AddStaticRoute(routes, kTryItPath, web::TryItHtml(), "text/html; charset=utf-8");
  AddStaticRoute(routes, "/try-it.js", web::TryItScript(), "text/javascript; charset=utf-8");
  AddStaticRoute(routes, "/try-it.css", web::TryItStyle(), "text/css; charset=utf-8");
  // Browsers ask for an icon; the page has none, and a 404 would be logged
  // as an error in their console.
  routes.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& response) { response.status = 204; });
  // Liveness: the process answers. Readiness: the inference service is
  // SERVING (every model ready; not while loading, warming up or
  // draining), or with ?model=NAME that model is.
  routes.Get(kLivePath, [](const httplib::Request&, httplib::Response& response) {
    response.set_content("{\"status\":\"SERVING\"}", "application/json");
  });
  auto health = std::shared_ptr<grpc::health::v1::Health::Stub>(grpc::health::v1::Health::NewStub(channel));
  routes.Get(kReadyPath, [health](const httplib::Request& http_request, httplib::Response& response) {
    grpc::health::v1::HealthCheckRequest request;
    const std::string model = http_request.get_param_value("model");
    request.set_service(model.empty() ? pb::InferenceService::service_full_name() : model);
    grpc::health::v1::HealthCheckResponse answer;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    const grpc::Status status = health->Check(&context, request, &answer);
    const bool serving = status.ok() && answer.status() == grpc::health::v1::HealthCheckResponse::SERVING;
    // A model the server does not know: 404, as its other routes.
    const bool unknown = status.error_code() == grpc::StatusCode::NOT_FOUND;
    response.status = serving ? 200 : unknown ? 404 : 503;
    response.set_content(absl::StrCat("{\"status\":\"",
                                      status.ok() ? grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
                                                        answer.status())
                                                  : unknown ? "SERVICE_UNKNOWN" : "NOT_SERVING",
                                      "\"}"),
                         "application/json");
  });
}

}  // namespace deberta::service
