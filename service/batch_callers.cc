// BatchCallers: per-sequence liveness and abandoned-time accounting.
#include "service/batch_callers.h"

#include <algorithm>

namespace deberta::service {

BatchCallers::BatchCallers(const std::vector<std::unique_ptr<BatchTask>>& batch, Clock* clock, absl::Time start)
    : batch_(batch), clock_(clock), last_check_(start), gone_(batch.size(), false), computed_(batch.size()) {}

std::vector<bool> BatchCallers::Wanted() {
  const size_t computed_before = computed_;
  Check(clock_->Now());
  if (computed_ < computed_before) any_dropped_ = true;
  std::vector<bool> wanted(gone_.size());
  for (size_t i = 0; i < gone_.size(); ++i) wanted[i] = !gone_[i];
  return wanted;
}

void BatchCallers::Finish(absl::Time end) { Check(end); }

void BatchCallers::Check(absl::Time now) {
  const absl::Duration interval = now - last_check_;
  const auto sharing = static_cast<int64_t>(computed_);  // Before this check's drops.
  for (size_t i = 0; i < gone_.size(); ++i) {
    if (gone_[i] || !batch_[i]->is_gone(now)) continue;
    gone_[i] = true;
    --computed_;
    if (interval <= absl::ZeroDuration()) continue;
    // The part of the interval after the caller left, clamped to it (a
    // cancellation or deadline before the interval counts from its start).
    const absl::Time left = std::clamp(batch_[i]->gone_since(), last_check_, now);
    abandoned_ += (now - left) / sharing;
  }
  last_check_ = now;
}

}  // namespace deberta::service
