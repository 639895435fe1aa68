// BatchTask: one sequence of one request, as the batcher queues it. A
// request with several sequences becomes several tasks whose results the
// handler reassembles in order.
#ifndef DEBERTA_SERVICE_BATCH_TASK_H_
#define DEBERTA_SERVICE_BATCH_TASK_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "model/engine.h"

namespace deberta::service {

enum class TaskKind { kClassify = 0, kFillMask = 1 };
inline constexpr int kNumTaskKinds = 2;
const char* TaskKindName(TaskKind kind);  // "classify", "fill_mask"

struct TaskResult {
  model::ClassifyOutput classify;    // Set for kClassify.
  model::FillMaskOutput fill_mask;   // Set for kFillMask.
};

struct BatchTask {
  TaskKind kind = TaskKind::kClassify;
  // The sequence; for fill-mask also positions and top_k.
  model::MaskedSequence input;
  // Dropped with DeadlineExceeded, before compute, if still queued then.
  absl::Time deadline = absl::InfiniteFuture();
  // Returns true once the client has gone away; such tasks are dropped
  // with Cancelled before compute. May be empty.
  std::function<bool()> is_cancelled;
  // Called exactly once, on the batcher thread, iff Schedule returned OK.
  // The result is meaningful only when the status is OK.
  std::function<void(const absl::Status&, TaskResult)> done;

  // Set by the batcher.
  absl::Time enqueue_time;

  size_t length() const { return input.sequence.token_ids.size(); }
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_BATCH_TASK_H_
