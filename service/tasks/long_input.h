// Long inputs in windows (docs/tasks.md 3): which windows of content tokens
// a text is split into, the checks made before anything is queued, how the
// windows' score vectors are aggregated, and which window each token of a
// token-classification answer takes its probabilities from. Plain data in
// and out: no proto, no LibTorch.
#ifndef DEBERTA_SERVICE_TASKS_LONG_INPUT_H_
#define DEBERTA_SERVICE_TASKS_LONG_INPUT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace deberta::service {

// Content tokens [start, end) of the windowed text.
struct TokenWindow {
  int32_t start = 0;
  int32_t end = 0;
};

// The windows of `content_tokens` tokens with room for `capacity` (C) per
// window, consecutive windows sharing `stride` tokens: window k starts at
// k * (C - stride), until one reaches the last token (a text that fits is
// one window; an empty one too). InvalidArgument, naming the numbers, when
// C < 1, stride < 0 or stride >= C, or more than `max_windows` windows
// would be needed.
absl::StatusOr<std::vector<TokenWindow>> PlanWindows(int64_t content_tokens, int64_t capacity, int64_t stride,
                                                     int64_t max_windows);

enum class WindowAggregate { kMax, kMean, kFirst };

// One score vector from each window's (all the same length): label by label
// the largest (kMax) or the mean (kMean), or the first window's (kFirst).
std::vector<float> AggregateWindowScores(const std::vector<std::vector<float>>& per_window,
                                         WindowAggregate aggregate);

// For each content token 0..n-1, the window it lies farthest inside: the
// largest min(i - start, end - 1 - i), the earlier window on ties.
std::vector<int32_t> TokenWindowChoice(const std::vector<TokenWindow>& windows, int64_t content_tokens);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_LONG_INPUT_H_
