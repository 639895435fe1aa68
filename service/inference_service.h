// InferenceServiceImpl: the gRPC callback handlers, one line each: every
// RPC goes through one path (Serve), which checks the API key, admits the
// call (or answers Unavailable while draining), starts its access-log line
// and metrics, and hands the request to its task (service/tasks/), whose
// work it schedules on the Batcher; the call is answered after the last
// task, or at once when the task needs no engine or fails its checks.
// Every call is an InferenceCall reactor that owns the call's state.
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
#include "service/tasks/task.h"

namespace deberta::service {

class InferenceCall;

// Thread-safe. Borrows its dependencies (the batcher, metrics, tokenizer,
// API keys and access log), which must outlive the gRPC server that holds
// this service.
class InferenceServiceImpl final : public serving::v1::InferenceService::CallbackService {
 public:
  // Settings only; the objects the service uses come to its constructor.
  struct Options {
    // Limits and truncation of requests (its tokenizer and mask_token_id
    // are ignored: the constructor's tokenizer and special_tokens.mask are
    // used).
    RequestOptions requests;
    // Reported by GetModelInfo; `mask` is what fill-mask predicts when a
    // sequence names no positions.
    model::SpecialTokens special_tokens;
    std::string server_version;
    // With an access log: each line carries the request message too (token
    // ids and text). REQUIRES: an access log when set.
    bool log_payloads = false;
  };

  // The objects a service borrows besides the batcher; each may be null.
  struct Borrowed {
    // The checkpoint's tokenizer (text inputs, tokenization); null: none.
    const model::Tokenizer* tokenizer = nullptr;
    // When set, every call needs `authorization: Bearer <key>` with one of
    // these keys.
    const ApiKeys* api_keys = nullptr;
    // One line per request when set.
    AccessLog* access_log = nullptr;
    ServiceMetrics* metrics = nullptr;
  };

  InferenceServiceImpl(const model::ModelInfo& info, const Options& options, Batcher* batcher,
                       const Borrowed& borrowed);

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
  grpc::ServerUnaryReactor* ClassifyTokens(grpc::CallbackServerContext* context,
                                           const serving::v1::ClassifyTokensRequest* request,
                                           serving::v1::ClassifyTokensResponse* response) override;
  grpc::ServerUnaryReactor* Rerank(grpc::CallbackServerContext* context, const serving::v1::RerankRequest* request,
                                   serving::v1::RerankResponse* response) override;
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context,
                                     const serving::v1::TokenizeRequest* request,
                                     serving::v1::TokenizeResponse* response) override;
  grpc::ServerUnaryReactor* Detokenize(grpc::CallbackServerContext* context,
                                       const serving::v1::DetokenizeRequest* request,
                                       serving::v1::DetokenizeResponse* response) override;

 private:
  // The one path of every RPC: StartCall, then the task's `start`, then
  // Submit its tasks (or answer at once).
  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* Serve(Endpoint endpoint, grpc::CallbackServerContext* context, const Request* request,
                                  Response* response, const std::string& request_id,
                                  StartTask<Request, Response> start);
  // OK, or Unauthenticated when API keys are on and the call carries none
  // of them.
  absl::Status Authorize(const grpc::CallbackServerContext& context) const;
  // Counts a call as accepted unless the server has stopped accepting.
  bool TryAcceptCall();
  // An accepted call is done (from its OnDone).
  void CallDone();
  // A new call: authorized and accepted (counted until its OnDone), or
  // already answered (Unauthenticated, or Unavailable while draining, each
  // recorded as a rejection); `accepted` says which.
  InferenceCall* StartCall(Endpoint endpoint, grpc::CallbackServerContext* context,
                           const google::protobuf::Message& request, const std::string& request_id, bool* accepted);
  // The start of a call's access-log line: its protocol (always, for the
  // metrics), and with the access log on the request id, peer, traceparent
  // (and `request` itself with log_payloads).
  AccessRecord LogStart(const grpc::CallbackServerContext& context, const google::protobuf::Message& request,
                        const std::string& request_id) const;
  // Answers a request that failed its task's checks; returns the call.
  InferenceCall* Reject(InferenceCall* call, const absl::Status& invalid);
  // Schedules the work's tasks; the call is answered after the last task,
  // or at once if scheduling fails. When every task succeeded, the work's
  // `complete` (if set) runs first, on the thread of the last task, and its
  // status is the answer's.
  void Submit(InferenceCall* call, Endpoint endpoint, TaskWork work);

  const TaskEnv env_;
  const bool log_payloads_;
  Batcher* const batcher_;
  const ApiKeys* const api_keys_;  // May be null (no keys needed).
  AccessLog* const access_log_;    // May be null (no access log).
  ServiceMetrics* const metrics_;  // May be null.
  absl::Mutex calls_mu_;
  bool accepting_ ABSL_GUARDED_BY(calls_mu_) = true;
  int accepted_calls_ ABSL_GUARDED_BY(calls_mu_) = 0;  // Accepted and not yet done.
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_INFERENCE_SERVICE_H_
