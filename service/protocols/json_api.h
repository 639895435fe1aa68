// The HTTP/JSON API beside gRPC: every InferenceService RPC as a POST under
// /v1/ (/v1/classify, /v1/fill-mask, /v1/zero-shot-classify, /v1/tokenize,
// /v1/detokenize, /v1/model), bodies in protobuf's canonical JSON mapping
// of the same messages (the proto stays the one schema), and /health/live
// and /health/ready. Each request is made on the server's in-process gRPC
// channel, so it meets the same batcher, limits, API keys, deadlines,
// metrics and access log; errors are the gRPC code mapped to an HTTP status
// (status_util.h) with a JSON body {"code": "INVALID_ARGUMENT", "message":
// "..."}. A deadline comes from the `X-Deadline-Ms` header or the
// `deadline_ms` query parameter.
#ifndef DEBERTA_SERVICE_PROTOCOLS_JSON_API_H_
#define DEBERTA_SERVICE_PROTOCOLS_JSON_API_H_

#include <grpcpp/channel.h>
#include <httplib.h>

#include <memory>
#include <string>

namespace deberta::service {

// Registers the routes on `routes`; `channel` is the server's in-process
// channel and must outlive them. `openapi_document` is served as it is.
void AddJsonApiRoutes(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel, std::string openapi_document);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_JSON_API_H_
