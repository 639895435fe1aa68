// BatchCallers: which sequences of a running batch still have a caller
// (what the engine asks between layers, model::Engine::RowsWanted), and how
// much of the batch's engine time went to sequences whose caller had gone.
#ifndef DEBERTA_SERVICE_BATCH_CALLERS_H_
#define DEBERTA_SERVICE_BATCH_CALLERS_H_

#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "service/batch_task.h"
#include "service/clock.h"

namespace deberta::service {

// Time is attributed per sequence: between two checks every sequence still
// computed costs an equal share of the interval, spent evenly over it. A
// sequence found gone at a check is charged the part of its share that
// came after its caller left (its deadline, or the time gRPC reported the
// cancellation: BatchTask::gone_since); it is then dropped by the engine
// and costs nothing afterwards.
//
// Used on the executor thread only; borrows the batch and the clock.
class BatchCallers {
 public:
  BatchCallers(const std::vector<std::unique_ptr<BatchTask>>& batch, Clock* clock, absl::Time start);

  // One flag per task of the batch: false once its caller has gone (past
  // its deadline, or cancelled). Reads the clock once.
  std::vector<bool> Wanted();
  // Accounts the time since the last check; call once the engine returned.
  void Finish(absl::Time end);

  // Whether task i's caller was found gone (by a check or by Finish).
  bool gone(size_t i) const { return gone_[i]; }
  // Whether a check found a caller gone, so the engine computed fewer
  // sequences than the batch holds.
  bool any_dropped() const { return any_dropped_; }
  // Engine time charged to sequences whose caller had gone.
  absl::Duration abandoned() const { return abandoned_; }

 private:
  // Marks the tasks gone at `now` and charges them their share of the
  // interval since the last check.
  void Check(absl::Time now);

  const std::vector<std::unique_ptr<BatchTask>>& batch_;
  Clock* const clock_;
  absl::Time last_check_;
  std::vector<bool> gone_;
  size_t computed_;  // Tasks not yet found gone.
  bool any_dropped_ = false;
  absl::Duration abandoned_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_BATCH_CALLERS_H_
