// The OpenAPI 3.0 document of the HTTP/JSON API (served at
// /v1/openapi.json), generated at start from the API's descriptors compiled
// into the binary (proto/descriptor_set.h): one POST operation per RPC of
// InferenceService at its path in the route table (endpoint.h), request and response
// schemas in protobuf's canonical JSON mapping (field json names, 64-bit
// integers as strings, enums by name), descriptions from the proto's
// comments, the error body, the deadline header and parameter, the health
// probes and, when the server wants API keys, bearer authentication.
#ifndef DEBERTA_SERVICE_PROTOCOLS_OPENAPI_H_
#define DEBERTA_SERVICE_PROTOCOLS_OPENAPI_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "service/protocols/http_protocols.h"

namespace deberta::service {

struct OpenApiOptions {
  std::string server_version;  // info.version.
  bool api_keys = false;       // Every /v1/ operation needs a bearer key.
  HttpProtocolOptions protocols;  // Which adapters' routes the port has.
};

// The document as JSON text. An error means the descriptors and the route
// table disagree (an RPC without a path): a build defect, not bad input.
absl::StatusOr<std::string> MakeOpenApiDocument(const OpenApiOptions& options);

// The same from a serialized FileDescriptorSet holding `service_name`, for
// tests that feed it other descriptors.
absl::StatusOr<std::string> MakeOpenApiDocument(const OpenApiOptions& options, std::string_view descriptor_set,
                                                std::string_view service_name);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_OPENAPI_H_
