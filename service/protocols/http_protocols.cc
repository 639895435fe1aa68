// The HTTP port's protocols, in one list.
#include "service/protocols/http_protocols.h"

#include <utility>

#include "service/protocols/cohere_rerank.h"
#include "service/protocols/hf_inference.h"
#include "service/protocols/json_api.h"
#include "service/protocols/kserve_http.h"
#include "service/protocols/tei_http.h"

namespace deberta::service {

void AddHttpProtocols(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel, std::string openapi_document,
                      const HttpProtocolOptions& options) {
  AddJsonApiRoutes(routes, channel, std::move(openapi_document));
  AddHuggingFaceRoutes(routes, channel);
  AddTeiRoutes(routes, channel, options.tei_compatible_routes);
  AddCohereRerankRoute(routes, channel);
  AddKserveRoutes(routes, channel, options.server_version);
}

nlohmann::json HttpProtocolsOpenApi(const HttpProtocolOptions& options) {
  nlohmann::json paths = HuggingFaceOpenApi();
  paths.update(TeiOpenApi(options.tei_compatible_routes));
  paths.update(CohereRerankOpenApi());
  paths.update(KserveOpenApi());
  return paths;
}

}  // namespace deberta::service
