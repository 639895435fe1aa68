// FakeEngine: a model::Engine for service tests, without LibTorch. It
// records the batches it receives, answers with outputs derived from the
// inputs (so a test can tell which answer belongs to which sequence), and
// can be told to fail or to block until released.
#ifndef DEBERTA_TESTS_TESTING_FAKE_ENGINE_H_
#define DEBERTA_TESTS_TESTING_FAKE_ENGINE_H_

#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "model/engine.h"

namespace deberta::testing {

// Thread-safe: the batcher calls it while the test inspects and steers it.
class FakeEngine final : public model::Engine {
 public:
  // vocab 100, 3 labels, both heads, sequences up to 64 tokens.
  FakeEngine();

  const model::ModelInfo& info() const override { return info_; }
  // To describe another model; before the engine is used.
  model::ModelInfo* mutable_info() { return &info_; }
  // Records the calling thread and how many batches ran before; returns
  // what FailInitializationWith set (OK by default).
  absl::Status InitializeThread() override;
  // What ReportDeviceMemory set (nullopt, like a CPU engine, by default).
  std::optional<model::DeviceMemoryUse> DeviceMemory() const override;
  void ReportDeviceMemory(std::optional<model::DeviceMemoryUse> memory);

  // The first token id of every sequence of every batch run so far.
  std::vector<std::vector<int32_t>> BatchesByFirstToken() const;
  // The sequence lengths of every batch run so far.
  std::vector<std::vector<size_t>> BatchLengths() const;
  int batches_run() const;
  // The thread that ran InitializeThread (default id if none did), and the
  // batches run before it.
  std::thread::id initialized_thread() const;
  int batches_before_initialization() const;
  void FailInitializationWith(absl::Status status);

  // Every later batch fails with `status` (OK to stop failing).
  void FailWith(absl::Status status);
  // While blocked, a batch that arrives waits inside the engine until
  // Unblock(); AwaitBlockedBatch() returns once one is waiting.
  void Block();
  void Unblock();
  void AwaitBlockedBatch();

 private:
  // Logits of a sequence: {first token id, length, last token id}; of a
  // one-label model (a reranker), {length / 10}. After
  // a blocked batch is released, its RowsWanted is asked once: rows not
  // wanted get empty outputs, Cancelled if none is wanted.
  absl::StatusOr<std::vector<model::ClassifyOutput>> RunClassify(absl::Span<const model::Sequence> batch,
                                                                 const RowsWanted& rows_wanted) override;
  // Per position, logit 2 for label (token id % labels), 0 for the others.
  absl::StatusOr<std::vector<model::TokenClassifyOutput>> RunClassifyTokens(
      absl::Span<const model::Sequence> batch, const RowsWanted& rows_wanted) override;
  // One prediction per position; candidate k is token id (position + k).
  absl::StatusOr<std::vector<model::FillMaskOutput>> RunFillMask(absl::Span<const model::MaskedSequence> batch,
                                                                 const RowsWanted& rows_wanted) override;

  // Records the batch, then waits while blocked; returns the failure to report.
  absl::Status Enter(const std::vector<const model::Sequence*>& batch);

  model::ModelInfo info_;
  mutable absl::Mutex mu_;
  std::vector<std::vector<int32_t>> first_tokens_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<size_t>> lengths_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  absl::Status initialization_failure_ ABSL_GUARDED_BY(mu_);
  std::thread::id initialized_thread_ ABSL_GUARDED_BY(mu_);
  int batches_before_initialization_ ABSL_GUARDED_BY(mu_) = -1;
  bool blocked_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<model::DeviceMemoryUse> device_memory_ ABSL_GUARDED_BY(mu_);
  int waiting_inside_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace deberta::testing

#endif  // DEBERTA_TESTS_TESTING_FAKE_ENGINE_H_
