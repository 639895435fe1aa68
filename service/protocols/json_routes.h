// The HTTP/JSON API's paths beside the RPCs' (whose POST paths are in the
// route table, endpoint.h), read by the routes (json_api.cc) and the OpenAPI
// document (openapi.cc), so that the two cannot disagree.
#ifndef DEBERTA_SERVICE_PROTOCOLS_JSON_ROUTES_H_
#define DEBERTA_SERVICE_PROTOCOLS_JSON_ROUTES_H_

#include "service/endpoint.h"

namespace deberta::service {

// GET routes beside the RPCs.
inline constexpr char kLivePath[] = "/health/live";
inline constexpr char kReadyPath[] = "/health/ready";
inline constexpr char kOpenApiPath[] = "/v1/openapi.json";
inline constexpr char kTryItPath[] = "/";

// Where a deadline in milliseconds may come with a request.
inline constexpr char kDeadlineHeader[] = "X-Deadline-Ms";
inline constexpr char kDeadlineParameter[] = "deadline_ms";

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_JSON_ROUTES_H_
