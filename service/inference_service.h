// InferenceServiceImpl: the gRPC callback handlers. Each turns its request
// into batch tasks (request_builder.h), hands them to the Batcher and
// returns at once; an error is answered at once. Every Classify and
// FillMask call is an InferenceCall reactor that owns the call's state.
// Reactions never block.
#ifndef DEBERTA_SERVICE_INFERENCE_SERVICE_H_
#define DEBERTA_SERVICE_INFERENCE_SERVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "model/engine.h"
#include "model/special_tokens.h"
#include "service/access_log.h"
#include "service/api_keys.h"
#include "service/batcher.h"
#include "service/metrics.h"
#include "service/request_builder.h"

namespace deberta::service {

class InferenceCall;

// Thread-safe. Borrows the batcher and metrics, which must outlive the
// gRPC server that holds this service.
class InferenceServiceImpl final : public serving::v1::InferenceService::CallbackService {
 public:
  struct Options {
    // Limits, truncation and the tokenizer of requests (its mask_token_id
    // is ignored: special_tokens.mask is used).
    RequestOptions requests;
    // Reported by GetModelInfo; `mask` is what fill-mask predicts when a
    // sequence names no positions.
    model::SpecialTokens special_tokens;
    std::string server_version;
    // When set, every call needs `authorization: Bearer <key>` with one of
    // these keys (borrowed; outlives the service).
    const ApiKeys* api_keys = nullptr;
    // One line per request when set (borrowed); with `log_payloads` the
    // line carries the request message too.
    AccessLog* access_log = nullptr;
    bool log_payloads = false;
  };

  InferenceServiceImpl(const model::ModelInfo& info, const Options& options, Batcher* batcher,
                       ServiceMetrics* metrics);

  // After this, new requests get Unavailable (the server is draining).
  void StopAccepting();
  // Blocks until every accepted Classify and FillMask call is done, or
  // until `deadline`; returns whether none is left.
  bool AwaitNoOpenCalls(absl::Time deadline);

  grpc::ServerUnaryReactor* Classify(grpc::CallbackServerContext* context,
                                     const serving::v1::ClassifyRequest* request,
                                     serving::v1::ClassifyResponse* response) override;
  grpc::ServerUnaryReactor* FillMask(grpc::CallbackServerContext* context,
                                     const serving::v1::FillMaskRequest* request,
                                     serving::v1::FillMaskResponse* response) override;
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const serving::v1::GetModelInfoRequest* request,
                                         serving::v1::ModelInfo* response) override;
  grpc::ServerUnaryReactor* ZeroShotClassify(grpc::CallbackServerContext* context,
                                             const serving::v1::ZeroShotClassifyRequest* request,
                                             serving::v1::ZeroShotClassifyResponse* response) override;
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context,
                                     const serving::v1::TokenizeRequest* request,
                                     serving::v1::TokenizeResponse* response) override;
  grpc::ServerUnaryReactor* Detokenize(grpc::CallbackServerContext* context,
                                       const serving::v1::DetokenizeRequest* request,
                                       serving::v1::DetokenizeResponse* response) override;

 private:

  // OK, or Unauthenticated when API keys are on and the call carries none
  // of them.
  absl::Status Authorize(const grpc::CallbackServerContext& context) const;
  // Counts a call as accepted unless the server has stopped accepting.
  bool TryAcceptCall();
  // An accepted call is done (from its OnDone).
  void CallDone();
  // A new call, accepted (counted until its OnDone) or, while draining,
  // already answered Unavailable; `accepted` says which.
  InferenceCall* StartCall(Endpoint endpoint, grpc::CallbackServerContext* context,
                           const google::protobuf::Message& request, const std::string& request_id, bool* accepted);
  // The start of a call's access-log line: its protocol (always, for the
  // metrics), and with the access log on the request id, peer, traceparent
  // (and `request` itself with log_payloads).
  AccessRecord LogStart(const grpc::CallbackServerContext& context, const google::protobuf::Message& request,
                        const std::string& request_id) const;
  // Answers a request that failed its checks; returns the call.
  InferenceCall* Reject(InferenceCall* call, const absl::Status& invalid);
  // Answers an RPC that needs no batcher (model info, tokenization) with
  // `status`, recording it.
  grpc::ServerUnaryReactor* AnswerNow(grpc::CallbackServerContext* context, Endpoint endpoint,
                                      const google::protobuf::Message& request, absl::Time start,
                                      const absl::Status& status);
  // Schedules `tasks`, each of which writes its result with `write`; the
  // call is answered after the last task, or at once if scheduling fails.
  // When every task succeeded, `complete` (if set) runs first, on the
  // thread of the last task, and its status is the answer's.
  void Submit(InferenceCall* call, Endpoint endpoint, std::vector<std::unique_ptr<BatchTask>> tasks,
              std::vector<std::function<void(TaskResult)>> write,
              std::function<absl::Status()> complete = nullptr);

  const model::ModelInfo info_;
  const Options options_;
  const RequestOptions requests_;  // options_.requests with the mask id.
  Batcher* const batcher_;
  ServiceMetrics* const metrics_;  // May be null.
  absl::Mutex calls_mu_;
  bool accepting_ ABSL_GUARDED_BY(calls_mu_) = true;
  int accepted_calls_ ABSL_GUARDED_BY(calls_mu_) = 0;  // Accepted and not yet done.
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_INFERENCE_SERVICE_H_
