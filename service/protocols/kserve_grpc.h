// KServe's Open Inference Protocol v2 over gRPC (inference.GRPCInferenceService,
// proto/kserve/grpc_predict_v2.proto) on the server's gRPC port, so that
// tritonclient's gRPC client, perf_analyzer or a client generated from
// KServe's proto reach a model as they reach any v2 server: ServerLive,
// ServerReady, ModelReady, ServerMetadata, ModelMetadata and ModelInfer.
// Each request becomes the body of the matching REST route and goes
// through the same mapping (kserve_api.h; the inputs, outputs and
// parameters are those kserve_http.h lists), with protocol "kserve" in the
// metrics and the access log. Input data comes in each tensor's contents
// (bytes_contents for BYTES, int64_contents for INT64, int_contents for
// INT32) or in raw_input_contents (little-endian; a BYTES element is a
// 4-byte length and its bytes); the answer's tensors come the same way as
// the request's (raw_output_contents for a raw request). ServerLive,
// ServerReady and ModelReady need no API key, as the health probes.
#ifndef DEBERTA_SERVICE_PROTOCOLS_KSERVE_GRPC_H_
#define DEBERTA_SERVICE_PROTOCOLS_KSERVE_GRPC_H_

#include <grpcpp/impl/service_type.h>

#include <memory>
#include <string>

#include "service/protocols/grpc_adapter.h"

namespace deberta::service {

// The service; `backend` must outlive it. `server_version` is what
// ServerMetadata reports.
class KserveGrpcService {
 public:
  KserveGrpcService(GrpcAdapterBackend* backend, std::string server_version);
  ~KserveGrpcService();

  // To register on the server's builder.
  grpc::Service* service();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_KSERVE_GRPC_H_
