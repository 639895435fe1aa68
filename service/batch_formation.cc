// Length-aware batch formation.
#include "service/batch_formation.h"

#include <algorithm>
#include <numeric>

namespace deberta::service {

int64_t PaddedTokens(const std::vector<int64_t>& lengths, const std::vector<size_t>& batch) {
  int64_t longest = 0;
  for (size_t i : batch) longest = std::max(longest, lengths[i]);
  return longest * static_cast<int64_t>(batch.size());
}

std::vector<size_t> FormLengthAwareBatch(const std::vector<int64_t>& lengths,
                                         const BatchLimits& limits) {
  if (lengths.empty()) return {};
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  // Stable: among equal lengths, older first.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return lengths[a] < lengths[b]; });
  const size_t anchor = std::find(order.begin(), order.end(), size_t{0}) - order.begin();
  // Grow the window [lo, hi] in sorted order around the oldest sequence.
  size_t lo = anchor, hi = anchor;
  int64_t longest = lengths[0];
  auto fits = [&](int64_t new_longest, size_t new_size) {
    return new_size <= limits.max_batch_size &&
           new_longest * static_cast<int64_t>(new_size) <= limits.max_batch_tokens;
  };
  while (true) {
    const size_t size = hi - lo + 1;
    const bool can_low = lo > 0 && fits(longest, size + 1);
    const bool can_high = hi + 1 < order.size() && fits(lengths[order[hi + 1]], size + 1);
    if (!can_low && !can_high) break;
    // Prefer the neighbour that adds less padding: a shorter one costs the
    // gap to it only in wasted tokens of itself; a longer one pads the
    // whole batch up to it.
    bool take_low = can_low;
    if (can_low && can_high) {
      const int64_t low_waste = longest - lengths[order[lo - 1]];
      const int64_t high_waste = (lengths[order[hi + 1]] - longest) * static_cast<int64_t>(size);
      take_low = low_waste <= high_waste;
    }
    if (take_low) {
      --lo;
    } else {
      ++hi;
      longest = lengths[order[hi]];
    }
  }
  std::vector<size_t> batch(order.begin() + lo, order.begin() + hi + 1);
  std::sort(batch.begin(), batch.end());
  return batch;
}

std::vector<size_t> FormFirstComeBatch(const std::vector<int64_t>& lengths,
                                       const BatchLimits& limits) {
  std::vector<size_t> batch;
  int64_t longest = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const int64_t new_longest = std::max(longest, lengths[i]);
    if (!batch.empty() && (batch.size() + 1 > limits.max_batch_size ||
                           new_longest * static_cast<int64_t>(batch.size() + 1) > limits.max_batch_tokens)) {
      break;
    }
    batch.push_back(i);
    longest = new_longest;
  }
  return batch;
}

}  // namespace deberta::service
