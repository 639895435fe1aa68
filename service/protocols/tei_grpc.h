// text-embeddings-inference's gRPC API (package tei.v1, proto/tei/v1/tei.proto)
// on the server's gRPC port, so that a client generated from TEI's proto
// works unchanged: Info, Predict (Predict, PredictPair and their streams),
// Rerank (Rerank, RerankStream) and Tokenize (Tokenize, Decode and their
// streams). Each message becomes the body of the matching TEI HTTP route
// and goes through the same mapping (tei_api.h, TEI's rules: softmax or
// sigmoid scores, byte offsets), on the server's only model, with protocol
// "tei" in the metrics and the access log; the answers carry TEI's
// Metadata (characters, tokens, total, queue and inference times).
// Where proto3 cannot say "absent": truncate false means the server's
// --truncate; Tokenize's add_special_tokens false leaves out [CLS] and
// [SEP] (as TEI's gRPC does); Decode with skip_special_tokens false is
// answered when the ids hold no special token (the text is the same
// either way) and INVALID_ARGUMENT otherwise. A stream answers its
// requests one at a time, in order; its first failure ends it.
// Not served: the Embed service (UNIMPLEMENTED).
#ifndef DEBERTA_SERVICE_PROTOCOLS_TEI_GRPC_H_
#define DEBERTA_SERVICE_PROTOCOLS_TEI_GRPC_H_

#include <grpcpp/impl/service_type.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "service/protocols/grpc_adapter.h"

namespace deberta::service {

// What Info reports of the server's limits.
struct TeiGrpcLimits {
  uint32_t max_concurrent_requests = 0;  // The batcher's queue.
  uint32_t max_batch_tokens = 0;
  uint32_t max_batch_requests = 0;
  uint32_t max_client_batch_size = 0;    // Sequences in one request.
};

// The four services; `backend` must outlive them.
class TeiGrpcServices {
 public:
  TeiGrpcServices(GrpcAdapterBackend* backend, TeiGrpcLimits limits);
  ~TeiGrpcServices();

  // To register on the server's builder.
  std::vector<grpc::Service*> services();

 private:
  class InfoService;
  class PredictService;
  class RerankService;
  class TokenizeService;
  std::unique_ptr<InfoService> info_;
  std::unique_ptr<PredictService> predict_;
  std::unique_ptr<RerankService> rerank_;
  std::unique_ptr<TokenizeService> tokenize_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_TEI_GRPC_H_
