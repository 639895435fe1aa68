// GET /metrics on an HttpServer: the registry in Prometheus's text
// exposition format. With API keys it needs one ("Bearer <key>", or Basic
// auth with the key as password, which Prometheus's basic_auth sends) and
// answers 401 with a WWW-Authenticate challenge otherwise.
#ifndef DEBERTA_SERVICE_METRICS_ENDPOINT_H_
#define DEBERTA_SERVICE_METRICS_ENDPOINT_H_

#include <httplib.h>
#include <prometheus/registry.h>

#include <memory>

#include "service/api_keys.h"

namespace deberta::service {

// `keys` may be null (no key needed); borrowed, it must outlive `routes`.
void AddMetricsRoute(httplib::Server& routes, std::shared_ptr<prometheus::Registry> registry, const ApiKeys* keys);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_METRICS_ENDPOINT_H_
