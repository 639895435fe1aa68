// ServedModel: one version of one model in service: its engine replicas,
// tokenizer, batcher (its own queues and executor threads), metrics (with
// its `model` and `version` labels) and what its tasks read (TaskEnv). It
// counts the calls that hold it, so that a version being replaced or
// unloaded answers every call it accepted before it is freed.
#ifndef DEBERTA_SERVICE_MODELS_SERVED_MODEL_H_
#define DEBERTA_SERVICE_MODELS_SERVED_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "service/batcher.h"
#include "service/metrics.h"
#include "service/models/model_loader.h"
#include "service/open_calls.h"
#include "service/tasks/task.h"

namespace deberta::service {

// Thread-safe.
class ServedModel {
 public:
  struct Options {
    std::string name;
    int64_t version = 1;
    Batcher::Options batcher;
    // Limits and truncation of its requests (the tokenizer and mask id
    // come from the loaded model).
    RequestOptions requests;
    std::string server_version;
    int64_t memory_estimate_bytes = 0;  // As counted against --memory_limit.
  };

  // FailedPrecondition when the replicas are not one model, or when the
  // tokenizer has more ids than the model's vocabulary.
  static absl::StatusOr<std::unique_ptr<ServedModel>> Create(const Options& options, LoadedModel loaded,
                                                             std::shared_ptr<prometheus::Registry> registry);
  ~ServedModel();  // Stops the batcher.

  // Starts the executor threads, which initialize and warm up the engines;
  // returns once they have.
  absl::Status Start();

  const std::string& name() const { return options_.name; }
  int64_t version() const { return options_.version; }
  int64_t memory_estimate_bytes() const { return options_.memory_estimate_bytes; }
  const model::ModelInfo& info() const { return env_.info; }
  // What its tasks read: the model's description, limits and tokenizer.
  const TaskEnv& env() const { return env_; }
  Batcher& batcher() { return *batcher_; }
  ServiceMetrics& metrics() { return metrics_; }
  // "classify", "token_classification", "rerank", "fill_mask": what the
  // checkpoint's heads answer, with commas when several.
  std::string Task() const;

  // Counts a call unless the version has stopped accepting.
  bool TryAcceptCall() { return calls_.TryAccept(); }
  void CallDone() { calls_.Done(); }
  // New calls are refused from now on (TryAcceptCall is false).
  void StopAccepting() { calls_.StopAccepting(); }
  // Blocks until every accepted call is done, or `deadline`.
  bool AwaitNoOpenCalls(absl::Time deadline) { return calls_.AwaitNone(deadline); }
  // Runs queued work without waiting for batches to fill.
  void StartDraining() { batcher_->StartDraining(); }
  // Answers what is queued, then joins the executors; its
  // deberta_model_ready goes to 0. Idempotent.
  void Stop();

 private:
  ServedModel(const Options& options, LoadedModel loaded, std::shared_ptr<prometheus::Registry> registry);

  const Options options_;
  const std::vector<std::unique_ptr<model::Engine>> engines_;
  const std::unique_ptr<model::Tokenizer> tokenizer_;
  const TaskEnv env_;
  ServiceMetrics metrics_;
  std::unique_ptr<Batcher> batcher_;
  OpenCalls calls_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_MODELS_SERVED_MODEL_H_
