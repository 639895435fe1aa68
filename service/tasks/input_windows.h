// Text inputs of the sequence-level tasks (Classify, ZeroShotClassify,
// Rerank) as the sequences the engine runs: the one sequence of today's
// truncation rules, or, when the request's long_input asks for windows,
// the windows of its long text (docs/tasks.md 3) with the other text of a
// pair repeated in each. Also the request-level checks windows share: the
// window limit, the aggregate, and the cost of the request's sequences.
#ifndef DEBERTA_SERVICE_TASKS_INPUT_WINDOWS_H_
#define DEBERTA_SERVICE_TASKS_INPUT_WINDOWS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "deberta/serving/v1/inference.pb.h"
#include "model/engine.h"
#include "service/request_builder.h"
#include "service/tasks/long_input.h"

namespace deberta::service {

// The most windows one text may take: the request's max_windows, 0 meaning
// the server's. InvalidArgument, naming both, above the server's.
absl::StatusOr<int64_t> WindowLimit(const serving::v1::LongInput& long_input, const RequestOptions& options);

// The request's aggregate (unspecified: max). InvalidArgument for an
// unknown value.
absl::StatusOr<WindowAggregate> WindowAggregateOf(const serving::v1::LongInput& long_input);

inline bool WantsWindows(const serving::v1::LongInput& long_input) {
  return long_input.mode() == serving::v1::LongInput::MODE_WINDOWS;
}

// Which text of a pair is the long one, windowed; a single text always is.
enum class WindowedText { kFirst, kSecond };

// One text input as the engine runs it.
struct InputWindows {
  // The windows in order, or the one (possibly truncated) sequence.
  std::vector<model::Sequence> sequences;
  // The whole input as one sequence, special tokens included.
  int32_t num_tokens = 0;
  // Whether the one sequence was cut to fit (never with windows).
  bool truncated = false;
};

// Without windows: EncodeSequence under `limits`. With windows: each
// window of the long text (C = max_length - 2 for a single text, or
// max_length - 3 - the other text's tokens for a pair) as [CLS] a [SEP]
// (b [SEP]), token types as EncodeText gives them; a text that fits is one
// window, identical to the plain sequence. InvalidArgument, before
// anything runs, for C < 1, a bad stride or more than `window_limit`
// windows, naming the numbers.
absl::StatusOr<InputWindows> EncodeInWindows(const serving::v1::Sequence& in,
                                             const serving::v1::LongInput& long_input, int64_t window_limit,
                                             WindowedText windowed, const TextLimits& limits,
                                             const model::ModelInfo& info, const RequestOptions& options);

// The ids of `text`'s tokens.
absl::StatusOr<std::vector<int32_t>> TokenIds(const model::Tokenizer& tokenizer, absl::string_view text);

// [CLS] a [SEP] (b [SEP]), token types 0 up to the first [SEP], 1 after (as
// model::EncodeText).
model::Sequence JoinSequence(absl::Span<const int32_t> a, std::optional<absl::Span<const int32_t>> b,
                             const model::SpecialTokens& special);

// The cost limits on what one request queues, windows included: at most
// options.max_tokens_per_request tokens in all. InvalidArgument naming the
// numbers.
absl::Status CheckRequestTokens(int64_t tokens, const RequestOptions& options);

// Tokens of `sequences` together.
int64_t TotalTokens(const std::vector<model::Sequence>& sequences);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_INPUT_WINDOWS_H_
