// /metrics: API key check, then the text format.
#include "service/metrics_endpoint.h"

#include <prometheus/text_serializer.h>

namespace deberta::service {

void AddMetricsRoute(httplib::Server& routes, std::shared_ptr<prometheus::Registry> registry, const ApiKeys* keys) {
  routes.Get("/metrics", [registry = std::move(registry), keys](const httplib::Request& request,
                                                                httplib::Response& response) {
    if (keys != nullptr && !keys->Accepts(PresentedKey(request.get_header_value("Authorization")))) {
      response.status = 401;
      response.set_header("WWW-Authenticate", "Basic realm=\"deberta-serve\", charset=\"UTF-8\"");
      response.set_content("an API key is needed: 'Authorization: Bearer <key>' or Basic auth with it as password\n",
                           "text/plain");
      return;
    }
    response.set_content(prometheus::TextSerializer().Serialize(registry->Collect()),
                         "text/plain; version=0.0.4; charset=utf-8");
  });
}

}  // namespace deberta::service
