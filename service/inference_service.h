// InferenceServiceImpl: the gRPC callback handlers. Each validates its
// request, splits it into one BatchTask per sequence, hands them to the
// Batcher and returns at once; the last task's `done` fills the response
// and finishes the RPC. Reactions never block.
#ifndef DEBERTA_SERVICE_INFERENCE_SERVICE_H_
#define DEBERTA_SERVICE_INFERENCE_SERVICE_H_

#include <atomic>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "model/engine.h"
#include "service/batcher.h"
#include "service/metrics.h"
#include "service/special_tokens.h"

namespace deberta::service {

// Thread-safe. Borrows the batcher and metrics, which must outlive the
// gRPC server that holds this service.
class InferenceServiceImpl final : public deberta::serving::v1::InferenceService::CallbackService {
 public:
  struct Options {
    int max_sequences_per_request = 64;
    // Sequences longer than the model's limit: reject (false) or keep the
    // first max-1 tokens plus the last one, so [SEP] stays (true).
    bool truncate = false;
    SpecialTokens special_tokens;
    std::string server_version;
  };

  InferenceServiceImpl(const model::ModelInfo& info, const Options& options, Batcher* batcher,
                       ServiceMetrics* metrics);

  // After this, new requests get Unavailable (the server is draining).
  void StopAccepting() { accepting_.store(false); }
  // Blocks until every Classify and FillMask call has been answered, or
  // until `deadline`; returns whether none is left open.
  bool AwaitNoOpenCalls(absl::Time deadline);

  grpc::ServerUnaryReactor* Classify(grpc::CallbackServerContext* context,
                                     const deberta::serving::v1::ClassifyRequest* request,
                                     deberta::serving::v1::ClassifyResponse* response) override;
  grpc::ServerUnaryReactor* FillMask(grpc::CallbackServerContext* context,
                                     const deberta::serving::v1::FillMaskRequest* request,
                                     deberta::serving::v1::FillMaskResponse* response) override;
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const deberta::serving::v1::GetModelInfoRequest* request,
                                         deberta::serving::v1::ModelInfo* response) override;

 private:
  struct Call;  // One Classify or FillMask RPC in flight (defined in the .cc).

  // Every Classify and FillMask call is opened once and closed once:
  // CloseCall records the request metric, answers the RPC with `status`,
  // and keeps the open-call count (for the drain) and the in-flight gauge.
  void OpenCall();
  void CloseCall(const Call& call, const grpc::Status& status);
  // None, or more than max_sequences_per_request: InvalidArgument.
  absl::Status CheckSequenceCount(int count) const;
  // Validates (and truncates, when allowed) one request sequence.
  absl::Status PrepareSequence(int index, const deberta::serving::v1::Sequence& in,
                               model::Sequence* out) const;
  // Schedules `tasks`; when all are done, `finish` runs (once) with the
  // first error or OK and the RPC ends.
  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* context, Endpoint endpoint,
                                   std::vector<std::unique_ptr<BatchTask>> tasks,
                                   const absl::Status& invalid);

  const model::ModelInfo info_;
  const Options options_;
  Batcher* const batcher_;
  ServiceMetrics* const metrics_;
  std::atomic<bool> accepting_{true};
  absl::Mutex calls_mu_;
  int open_calls_ ABSL_GUARDED_BY(calls_mu_) = 0;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_INFERENCE_SERVICE_H_
