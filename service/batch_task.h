// BatchTask: one sequence of one request, as the batcher queues it. A
// request with several sequences becomes several tasks whose results the
// handler reassembles in order.
#ifndef DEBERTA_SERVICE_BATCH_TASK_H_
#define DEBERTA_SERVICE_BATCH_TASK_H_

#include <algorithm>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "model/engine.h"
#include "service/cancellation.h"
#include "service/endpoint.h"

namespace deberta::service {

struct TaskResult {
  model::ClassifyOutput classify;    // Set for Endpoint::kClassify.
  model::FillMaskOutput fill_mask;   // Set for Endpoint::kFillMask.
  absl::Duration queued;             // Time in the batcher's queue.
  absl::Duration inference;          // Engine time of its batch (0 if none ran).
};

struct BatchTask {
  // kClassify or kFillMask.
  Endpoint endpoint = Endpoint::kClassify;
  // The sequence, already validated; for fill-mask also positions and top_k.
  model::MaskedSequence input;
  // Built from text that was truncated to fit (reported in the answer).
  bool truncated = false;
  // Built from text (the answer then also carries text).
  bool from_text = false;
  // Dropped with DeadlineExceeded, before compute, if still queued then.
  absl::Time deadline = absl::InfiniteFuture();
  // Marked once the client has gone away (by the call, from gRPC's
  // OnCancel); such tasks are dropped with Cancelled before compute. The
  // batcher reads only this mark, never the transport. May be null.
  std::shared_ptr<const Cancellation> cancelled;
  // Called exactly once, on the batcher thread, iff Schedule returned OK.
  // The result is meaningful only when the status is OK.
  std::function<void(const absl::Status&, TaskResult)> done;

  // Set by the batcher.
  absl::Time enqueue_time;

  size_t length() const { return input.sequence.token_ids.size(); }
  bool is_cancelled() const { return cancelled != nullptr && cancelled->cancelled(); }
  // Whether no caller wants the answer any more at `now`: past its
  // deadline, or cancelled.
  bool is_gone(absl::Time now) const { return deadline <= now || is_cancelled(); }
  // Since when no caller has wanted it: its deadline or its cancellation,
  // whichever came first (InfiniteFuture while it is wanted).
  absl::Time gone_since() const {
    return std::min(deadline, cancelled != nullptr ? cancelled->cancelled_at() : absl::InfiniteFuture());
  }
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_BATCH_TASK_H_
