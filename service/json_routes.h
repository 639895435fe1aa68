// The HTTP/JSON API's paths, in one table read by the routes (json_api.cc)
// and the OpenAPI document (openapi.cc), so that the two cannot disagree.
#ifndef DEBERTA_SERVICE_JSON_ROUTES_H_
#define DEBERTA_SERVICE_JSON_ROUTES_H_

#include <string_view>

namespace deberta::service {

// One RPC of deberta.serving.v1.InferenceService as a POST on `path`.
struct JsonRoute {
  std::string_view rpc;  // The method's name in the proto.
  std::string_view path;
};

inline constexpr JsonRoute kJsonRoutes[] = {
    {"Classify", "/v1/classify"},
    {"FillMask", "/v1/fill-mask"},
    {"ZeroShotClassify", "/v1/zero-shot-classify"},
    {"Tokenize", "/v1/tokenize"},
    {"Detokenize", "/v1/detokenize"},
    {"GetModelInfo", "/v1/model"},
};

// The path of `rpc`, or empty when the table has none.
constexpr std::string_view JsonPath(std::string_view rpc) {
  for (const JsonRoute& route : kJsonRoutes) {
    if (route.rpc == rpc) return route.path;
  }
  return {};
}

// GET routes beside the RPCs.
inline constexpr char kLivePath[] = "/health/live";
inline constexpr char kReadyPath[] = "/health/ready";
inline constexpr char kOpenApiPath[] = "/v1/openapi.json";
inline constexpr char kTryItPath[] = "/";

// Where a deadline in milliseconds may come with a request.
inline constexpr char kDeadlineHeader[] = "X-Deadline-Ms";
inline constexpr char kDeadlineParameter[] = "deadline_ms";

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_JSON_ROUTES_H_
