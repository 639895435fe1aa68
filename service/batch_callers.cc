// BatchCallers: per-sequence liveness and abandoned-time accounting.
#include "service/batch_callers.h"

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
  if (computed_ > 0) {
    const absl::Duration share = (now - last_check_) / static_cast<int64_t>(computed_);
    for (size_t i = 0; i < gone_.size(); ++i) {
      if (gone_[i] || !batch_[i]->is_gone(now)) continue;
      gone_[i] = true;
      --computed_;
      abandoned_ += share;
    }
  }
  last_check_ = now;
}

}  // namespace deberta::service
