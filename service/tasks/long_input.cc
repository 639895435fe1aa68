// Windows over long inputs: planning, limits, aggregation.
#include "service/tasks/long_input.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace deberta::service {

absl::StatusOr<std::vector<TokenWindow>> PlanWindows(int64_t content_tokens, int64_t capacity, int64_t stride,
                                                     int64_t max_windows) {
  if (capacity < 1) {
    return absl::InvalidArgumentError(absl::StrCat("no room for a window: ", capacity,
                                                   " tokens per window after the special tokens (and the first "
                                                   "text of a pair); raise max_length or shorten the first text"));
  }
  if (stride < 0 || stride >= capacity) {
    return absl::InvalidArgumentError(absl::StrCat("stride is ", stride, "; it must be in [0, ", capacity,
                                                   ") (the ", capacity, " tokens a window holds)"));
  }
  const int64_t step = capacity - stride;
  // Windows until one reaches the last token: 1 + ceil((n - C) / step).
  const int64_t needed = content_tokens <= capacity ? 1 : 1 + (content_tokens - capacity + step - 1) / step;
  if (needed > max_windows) {
    return absl::InvalidArgumentError(absl::StrCat("the text needs ", needed, " windows of ", capacity,
                                                   " tokens with stride ", stride, "; at most ", max_windows,
                                                   " are allowed"));
  }
  std::vector<TokenWindow> windows;
  for (int64_t k = 0; k < needed; ++k) {
    const int64_t start = k * step;
    windows.push_back(
        {static_cast<int32_t>(start), static_cast<int32_t>(std::min(content_tokens, start + capacity))});
  }
  return windows;
}

std::vector<float> AggregateWindowScores(const std::vector<std::vector<float>>& per_window,
                                         WindowAggregate aggregate) {
  if (per_window.empty()) return {};
  if (aggregate == WindowAggregate::kFirst || per_window.size() == 1) return per_window.front();
  const size_t labels = per_window.front().size();
  std::vector<float> out(labels);
  for (size_t l = 0; l < labels; ++l) {
    if (aggregate == WindowAggregate::kMax) {
      float best = per_window.front()[l];
      for (const std::vector<float>& w : per_window) best = std::max(best, w[l]);
      out[l] = best;
    } else {
      double sum = 0;
      for (const std::vector<float>& w : per_window) sum += w[l];
      out[l] = static_cast<float>(sum / per_window.size());
    }
  }
  return out;
}

std::vector<int32_t> TokenWindowChoice(const std::vector<TokenWindow>& windows, int64_t content_tokens) {
  std::vector<int32_t> choice(static_cast<size_t>(content_tokens), -1);
  std::vector<int64_t> depth(static_cast<size_t>(content_tokens), -1);
  for (size_t w = 0; w < windows.size(); ++w) {
    for (int64_t i = windows[w].start; i < windows[w].end; ++i) {
      const int64_t d = std::min<int64_t>(i - windows[w].start, windows[w].end - 1 - i);
      if (d > depth[i]) {  // Strictly deeper: the earlier window keeps ties.
        depth[i] = d;
        choice[i] = static_cast<int32_t>(w);
      }
    }
  }
  return choice;
}

}  // namespace deberta::service
