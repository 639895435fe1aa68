// Batcher: bounded per-endpoint queues of BatchTasks, and one executor
// thread per engine replica that forms length-aware batches and runs them
// on its model::Engine.
#ifndef DEBERTA_SERVICE_BATCHER_H_
#define DEBERTA_SERVICE_BATCHER_H_

#include <array>
#include <deque>
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
#include "service/endpoint.h"

namespace deberta::service {

class ServiceMetrics;

// Schedules the sequences of requests into batches for one or more engine
// replicas (copies of one model: on one device, or one per device).
//
// Replicas: each engine has its own executor thread, which takes the next
// ready batch from the shared queues whenever its engine is free; so N
// replicas run up to N batches at once, and a batch goes to whichever
// replica is idle first. Each replica keeps its own estimate of its speed
// (below) and is counted in the per-replica metrics.
//
// Queues and fairness: one bounded queue per batched endpoint (classify,
// fill-mask); a batch never mixes endpoints. The executor serves the
// endpoints that have a batch ready in turn (round-robin), so a busy
// endpoint cannot starve the other. Within a queue the oldest task is in
// the next batch taken from it; the rest of that batch are the tasks
// closest to it in length (see FormLengthAwareBatch).
//
// Queueing delay: a queue is ready when it holds max_batch_size tasks, when
// its oldest task has waited batch_timeout, or while draining. So a task
// waits at most batch_timeout, plus the batch running when it became ready,
// plus one batch of the other endpoint, per task ahead of it in its queue.
// Tasks whose deadline passes or whose client goes away while queued are
// answered DeadlineExceeded or Cancelled before each batch is formed and
// never reach the engine; the executor wakes at the earliest deadline.
// A task taken into a batch whose deadline would pass before the batch is
// estimated to finish (the endpoint's recent seconds per padded token times
// the batch's padded tokens) is answered DeadlineExceeded instead of being
// computed for a client that will have gone. While a batch runs, the
// engine drops, between layers, the sequences whose caller has gone (see
// BatchCallers), and stops the batch once none is left.
//
// Drain: StartDraining runs queued work as soon as the executor is free,
// without waiting for batches to fill; Stop also rejects new tasks, runs
// every queued task, then joins the executor.
//
// Threads: each engine is called only from its own executor thread, which
// runs model::Engine::InitializeThread before its first batch (Start).
//
// Thread-safe. Owns its queued tasks and its executor threads; borrows the
// engines, clock and metrics, which must outlive it.
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
    // concurrency 1). REQUIRES: >= 0. Default 0.
    absl::Duration batch_timeout = absl::ZeroDuration();
    // Most queued sequences per endpoint; Schedule answers
    // ResourceExhausted beyond it. REQUIRES: >= 1. Default 1024.
    size_t max_enqueued_tasks = 1024;
    // Form batches by length (true) or first come, first served (false;
    // kept for comparison in the benchmark). Default true.
    bool length_aware = true;
  };

  // Does not start the executors (see Start). REQUIRES: `engines` not
  // empty, none null; replica i is engines[i].
  Batcher(const Options& options, std::vector<model::Engine*> engines, Clock* clock, ServiceMetrics* metrics);
  // One replica.
  Batcher(const Options& options, model::Engine* engine, Clock* clock, ServiceMetrics* metrics)
      : Batcher(options, std::vector<model::Engine*>{engine}, clock, metrics) {}
  // Stops (see Stop) and joins.
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Starts one executor thread per replica, runs each engine's
  // InitializeThread on its own (all at once) and returns once every one
  // is done: OK if all succeeded, else the first replica's error. On error
  // every executor has ended and Schedule answers Unavailable.
  // REQUIRES: called once.
  absl::Status Start();

  // Enqueues all of `tasks` (the sequences of one request) or none, and
  // returns immediately; never blocks. On OK, ownership moves to the
  // batcher and each task's `done` runs exactly once on an executor
  // thread. On error, `done` is never called and the caller answers the
  // request itself: ResourceExhausted when the queue would exceed
  // max_enqueued_tasks, Unavailable before Start or after Stop,
  // InvalidArgument when the tasks are empty or do not share one batched
  // endpoint.
  absl::Status Schedule(std::vector<std::unique_ptr<BatchTask>> tasks);

  // From now on queued tasks run as soon as the executor is free, without
  // waiting for a batch to fill: no more work is coming while the server
  // drains. Schedule still accepts tasks. Idempotent.
  void StartDraining();

  // Rejects new tasks, runs every task already queued, and joins every
  // executor. Idempotent; safe to call from several threads.
  void Stop();

  // Queued sequences of one batched endpoint (for tests and the gauge).
  size_t QueuedTasks(Endpoint endpoint) const;

 private:
  using Queue = std::deque<std::unique_ptr<BatchTask>>;
  using Tasks = std::vector<std::unique_ptr<BatchTask>>;

  // One engine and what only its executor thread touches.
  struct Replica {
    int index = 0;
    model::Engine* engine = nullptr;
    // Per endpoint, a moving average of this replica's seconds per padded
    // token over its recent batches (0: none yet).
    std::array<double, kNumBatchedEndpoints> seconds_per_token{};
  };

  // The loop of one replica's executor thread.
  void Run(Replica& replica);
  // True when some queue has a full batch, or a task that waited
  // batch_timeout, or when draining with work left.
  bool HasReadyWork(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool IsReady(const Queue& queue, absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // When the executor must next look at the queues by itself: the earliest
  // batch_timeout flush or task deadline.
  absl::Time NextWakeTime() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves expired and cancelled tasks of every queue to `dropped`.
  void DropAbandoned(absl::Time now, Tasks* dropped) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes one batch from the queue of `endpoint`.
  Tasks TakeBatch(Endpoint endpoint) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Answers tasks dropped before compute.
  void AnswerDropped(Tasks dropped, absl::Time now);
  // Answers a task whose caller has gone: DeadlineExceeded if its deadline
  // is past at `now`, else Cancelled; `when` ends the message ("while
  // queued"). `inference`: the engine time it had (0 if none).
  void AnswerGone(BatchTask& task, absl::Time now, absl::Duration inference, absl::string_view when);
  // Moves out of `batch` the tasks whose deadline falls before `now` plus
  // the batch's estimated duration on `replica` (none before the
  // replica's first batch of the endpoint); answers them DeadlineExceeded.
  // The replica's executor thread only, as is Execute.
  void DropUnfinishable(const Replica& replica, Endpoint endpoint, Tasks* batch, absl::Time now);
  void Execute(Replica& replica, Endpoint endpoint, Tasks batch, absl::Time now);
  void UpdateQueueGauges(int queue_index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  // Fixed at construction; each element is its executor's own (see Replica).
  std::vector<Replica> replicas_;
  Clock* const clock_;
  ServiceMetrics* const metrics_;  // May be null.

  absl::Mutex stop_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // Serializes Start, Stop and the join.
  mutable absl::Mutex mu_;
  std::array<Queue, kNumBatchedEndpoints> queues_ ABSL_GUARDED_BY(mu_);
  std::array<int64_t, kNumBatchedEndpoints> queued_tokens_ ABSL_GUARDED_BY(mu_){};
  bool accepting_ ABSL_GUARDED_BY(mu_) = false;  // Between a successful Start and Stop.
  bool draining_ ABSL_GUARDED_BY(mu_) = false;   // Set by StartDraining or Stop.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool start_failed_ ABSL_GUARDED_BY(mu_) = false;  // Some replica failed to initialize.
  int next_queue_ ABSL_GUARDED_BY(mu_) = 0;  // Round-robin start.
  std::vector<std::thread> executors_ ABSL_GUARDED_BY(stop_mu_);  // One per replica.
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_BATCHER_H_
