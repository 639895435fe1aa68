// Every protocol the server's HTTP port speaks, registered in one place:
// our HTTP/JSON API (json_api.h) and the adapters for other servers' APIs,
// each a file of this folder that maps its shapes onto our tasks' calls on
// the in-process channel (in_process_call.h): Hugging Face's Inference API
// (hf_inference.h), text-embeddings-inference (tei_http.h), Cohere's
// rerank (cohere_rerank.h) and KServe's Open Inference Protocol
// (kserve_http.h). A new adapter adds its file, its line here and
// in HttpProtocolsOpenApi, its `Protocol` (endpoint.h) and its tests.
#ifndef DEBERTA_SERVICE_PROTOCOLS_HTTP_PROTOCOLS_H_
#define DEBERTA_SERVICE_PROTOCOLS_HTTP_PROTOCOLS_H_

#include <grpcpp/channel.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace deberta::service {

struct HttpProtocolOptions {
  // TEI's routes at the root (/predict, /rerank, ...) as well as under /tei/.
  bool tei_compatible_routes = false;
  std::string server_version;  // What KServe's server metadata reports.
};

// Registers every protocol's routes; `channel` is the server's in-process
// channel and must outlive them; `openapi_document` is served as it is.
void AddHttpProtocols(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel, std::string openapi_document,
                      const HttpProtocolOptions& options);

// The adapters' OpenAPI path items (our API's come from its descriptors).
nlohmann::json HttpProtocolsOpenApi(const HttpProtocolOptions& options);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_HTTP_PROTOCOLS_H_
