// BatchTask: one sequence of one request, as the batcher queues it. To the
// batcher a task is opaque work: the queue it joins, its length for batch
// formation, and the function that runs a batch of its kind on an engine
// (engine_task.h makes one per engine call). A request with several
// sequences becomes several tasks whose results its call reassembles.
#ifndef DEBERTA_SERVICE_BATCH_TASK_H_
#define DEBERTA_SERVICE_BATCH_TASK_H_

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "model/engine.h"
#include "service/cancellation.h"
#include "service/endpoint.h"

namespace deberta::service {

// Where a task's time went, for the access log.
struct TaskTiming {
  absl::Duration queued;     // Time in the batcher's queue.
  absl::Duration inference;  // Engine time of its batch (0 if none ran).
};

class BatchTask {
 public:
  // Runs `batch` (tasks whose run() is this function, so of one type) in
  // one engine call and keeps each task's output in it; the batcher then
  // answers each task. An error fails the whole batch.
  using RunBatch = absl::Status (*)(model::Engine& engine, const std::vector<BatchTask*>& batch,
                                    const model::Engine::RowsWanted& rows_wanted);

  BatchTask(Endpoint queue, RunBatch run) : queue_(queue), run_(run) {}
  virtual ~BatchTask() = default;
  BatchTask(const BatchTask&) = delete;
  BatchTask& operator=(const BatchTask&) = delete;

  // The batched endpoint whose queue the task joins; a batch never mixes
  // queues.
  Endpoint queue() const { return queue_; }
  RunBatch run() const { return run_; }
  // Tokens, for length-aware batch formation and the padded-token budget.
  virtual size_t length() const = 0;

  // Answers the task, once: with OK its output goes to its writer first,
  // then `done` runs.
  void Answer(const absl::Status& status, TaskTiming timing) {
    if (status.ok()) WriteOutput();
    done(status, timing);
  }

  // Dropped with DeadlineExceeded, before compute, if still queued then.
  absl::Time deadline = absl::InfiniteFuture();
  // Marked once the client has gone away (by the call, from gRPC's
  // OnCancel); such tasks are dropped with Cancelled before compute. The
  // batcher reads only this mark, never the transport. May be null.
  std::shared_ptr<const Cancellation> cancelled;
  // Called exactly once, on the batcher thread, iff Schedule returned OK.
  std::function<void(const absl::Status&, TaskTiming)> done;
  // Set by the batcher.
  absl::Time enqueue_time;

  bool is_cancelled() const { return cancelled != nullptr && cancelled->cancelled(); }
  // Whether no caller wants the answer any more at `now`: past its
  // deadline, or cancelled.
  bool is_gone(absl::Time now) const { return deadline <= now || is_cancelled(); }
  // Since when no caller has wanted it: its deadline or its cancellation,
  // whichever came first (InfiniteFuture while it is wanted).
  absl::Time gone_since() const {
    return std::min(deadline, cancelled != nullptr ? cancelled->cancelled_at() : absl::InfiniteFuture());
  }

 protected:
  // Hands the output that run() kept to whoever writes the answer.
  virtual void WriteOutput() = 0;

 private:
  const Endpoint queue_;
  const RunBatch run_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_BATCH_TASK_H_
