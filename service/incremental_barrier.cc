// IncrementalBarrier: a count of pending pieces plus the owner's hold.
#include "service/incremental_barrier.h"

namespace deberta::service {

IncrementalBarrier::IncrementalBarrier(std::function<void()> done_callback)
    : state_(std::make_shared<State>(std::move(done_callback))) {}

IncrementalBarrier::~IncrementalBarrier() { state_->Release(); }

std::function<void()> IncrementalBarrier::Inc() {
  state_->pending.fetch_add(1, std::memory_order_relaxed);
  // The state outlives the barrier for as long as a piece is pending.
  return [state = state_] { state->Release(); };
}

}  // namespace deberta::service
