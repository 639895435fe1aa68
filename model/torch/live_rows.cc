// LiveRows: dropping the rows no longer wanted.
#include "model/torch/live_rows.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>

namespace deberta::model {

absl::Status BatchStoppedError() { return absl::CancelledError("stopped: every caller of the batch has gone"); }

LiveRows::LiveRows(int64_t count, const Engine::RowsWanted* wanted) : rows_(count), wanted_(wanted) {
  std::iota(rows_.begin(), rows_.end(), int64_t{0});
}

bool LiveRows::IsWanted(const std::vector<bool>& wanted, int64_t row) {
  return static_cast<size_t>(row) < wanted.size() && wanted[static_cast<size_t>(row)];
}

absl::Status LiveRows::DropUnwanted(KeyPadding* padding, const std::vector<at::Tensor*>& per_row) {
  if (wanted_ == nullptr) return absl::OkStatus();
  const std::vector<bool> wanted = (*wanted_)();
  std::vector<int64_t> kept_rows, kept_index;  // Input rows; their current index.
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (IsWanted(wanted, rows_[i])) {
      kept_rows.push_back(rows_[i]);
      kept_index.push_back(static_cast<int64_t>(i));
    }
  }
  if (kept_rows.empty()) return BatchStoppedError();
  if (kept_rows.size() == rows_.size()) return absl::OkStatus();
  const at::Tensor index = at::from_blob(kept_index.data(), {static_cast<int64_t>(kept_index.size())}, at::kLong)
                               .to(padding->mask.device());
  *padding = padding->Select(index);
  for (at::Tensor* t : per_row) {
    if (t->defined()) *t = t->index_select(0, index);
  }
  rows_ = std::move(kept_rows);
  return absl::OkStatus();
}

absl::Status LiveRows::CheckAnyWanted() const {
  if (wanted_ == nullptr) return absl::OkStatus();
  const std::vector<bool> wanted = (*wanted_)();
  const bool any = std::any_of(rows_.begin(), rows_.end(), [&](int64_t row) { return IsWanted(wanted, row); });
  return any ? absl::OkStatus() : BatchStoppedError();
}

int64_t LiveRows::KeepBelow(int64_t limit) {
  const auto kept = static_cast<int64_t>(std::lower_bound(rows_.begin(), rows_.end(), limit) - rows_.begin());
  rows_.resize(static_cast<size_t>(kept));
  return kept;
}

}  // namespace deberta::model
