// Batcher: bounded per-endpoint queues of BatchTasks, and one executor
// thread that forms length-aware batches and runs them on a model::Engine.
#ifndef DEBERTA_SERVICE_BATCHER_H_
#define DEBERTA_SERVICE_BATCHER_H_

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "model/engine.h"
#include "service/batch_formation.h"
#include "service/batch_task.h"
#include "service/clock.h"

namespace deberta::service {

class ServiceMetrics;

// Thread-safe. Owns its queued tasks and its executor thread; borrows the
// engine, clock and metrics, which must outlive it.
class Batcher {
 public:
  struct Options {
    // Most sequences in one batch. Larger batches raise throughput until
    // the device is saturated (CPU: ~8-32; GPU: 64-256), at the cost of
    // latency. REQUIRES: >= 1. Default 32.
    size_t max_batch_size = 32;
    // Most *padded* tokens in one batch (sequences x longest). Bounds the
    // memory and time of one forward; padding counts because it costs as
    // much as real tokens. REQUIRES: >= 1. Default 8192.
    int64_t max_batch_tokens = 8192;
    // Longest the oldest queued task waits for its batch to fill before the
    // batch is run anyway. 0 runs whatever is queued as soon as the
    // executor is free: an idle server adds no delay, and under load
    // batches still form from what arrives while the executor is busy.
    // A few ms can raise batch fill at moderate load on a GPU, where a
    // forward takes less time than requests take to gather; on a CPU it
    // only adds latency (measured: 1 ms timeout, 1.1 ms more at
    // concurrency 1). Default 0.
    absl::Duration batch_timeout = absl::ZeroDuration();
    // Most queued sequences per endpoint; Schedule answers
    // ResourceExhausted beyond it. REQUIRES: >= 1. Default 1024.
    size_t max_enqueued_tasks = 1024;
    // Form batches by length (true) or first come, first served (false;
    // kept for comparison in the benchmark).
    bool length_aware = true;
  };

  // Starts the executor thread.
  Batcher(const Options& options, model::Engine* engine, Clock* clock, ServiceMetrics* metrics);
  // Stops (see Stop) and joins.
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Enqueues all of `tasks` (the sequences of one request) or none, and
  // returns immediately; never blocks. On OK, ownership moves to the
  // batcher and each task's `done` runs exactly once on the executor
  // thread. On error, `done` is never called and the caller answers the
  // request itself: ResourceExhausted when the queue would exceed
  // max_enqueued_tasks, Unavailable after Stop.
  absl::Status Schedule(std::vector<std::unique_ptr<BatchTask>> tasks);

  // Runs `fn` on the executor thread before the next batch, and returns at
  // once. For work that must run on the thread that runs the engine: the
  // server's warm-up (the engine's intra-op threads belong to the thread
  // that calls it). REQUIRES: before Stop.
  void RunOnExecutor(std::function<void()> fn);

  // From now on queued tasks run as soon as the executor is free, without
  // waiting for a batch to fill: no more work is coming while the server
  // drains. Schedule still accepts tasks. Idempotent.
  void StartDraining();

  // Rejects new tasks, runs every task already queued, and joins the
  // executor. Idempotent.
  void Stop();

  // Queued sequences of one endpoint (for tests and the queue gauge).
  size_t QueuedTasks(TaskKind kind) const;

 private:
  using Queue = std::deque<std::unique_ptr<BatchTask>>;

  void Run();
  // True when some queue has a full batch, or a task that waited
  // batch_timeout, or when draining with work left.
  bool HasReadyWork(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool IsReady(const Queue& queue, absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Time EarliestFlushTime() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes expired and cancelled tasks (answering them) and takes one batch.
  std::vector<std::unique_ptr<BatchTask>> TakeBatch(TaskKind kind, absl::Time now,
                                                    std::vector<std::unique_ptr<BatchTask>>* dropped)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Execute(TaskKind kind, std::vector<std::unique_ptr<BatchTask>> batch, absl::Time now);
  void UpdateQueueGauges(TaskKind kind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  model::Engine* const engine_;
  Clock* const clock_;
  ServiceMetrics* const metrics_;  // May be null.

  mutable absl::Mutex mu_;
  std::array<Queue, kNumTaskKinds> queues_ ABSL_GUARDED_BY(mu_);
  std::array<int64_t, kNumTaskKinds> queued_tokens_ ABSL_GUARDED_BY(mu_){};
  std::vector<std::function<void()>> executor_work_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;  // Set by StartDraining or Stop.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int next_kind_ ABSL_GUARDED_BY(mu_) = 0;  // Round-robin start.
  std::thread executor_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_BATCHER_H_
