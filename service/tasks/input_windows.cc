// Text inputs in windows, and the checks a windowed request makes first.
#include "service/tasks/input_windows.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace deberta::service {

namespace pb = serving::v1;

absl::StatusOr<std::vector<int32_t>> TokenIds(const model::Tokenizer& tokenizer, absl::string_view text) {
  absl::StatusOr<std::vector<model::Token>> tokens = tokenizer.Tokenize(text);
  if (!tokens.ok()) return tokens.status();
  std::vector<int32_t> ids;
  ids.reserve(tokens->size());
  for (const model::Token& token : *tokens) ids.push_back(token.id);
  return ids;
}

model::Sequence JoinSequence(absl::Span<const int32_t> a, std::optional<absl::Span<const int32_t>> b,
                             const model::SpecialTokens& special) {
  model::Sequence out;
  out.token_ids.reserve(a.size() + (b ? b->size() + 3 : 2));
  out.token_ids.push_back(special.cls);
  out.token_ids.insert(out.token_ids.end(), a.begin(), a.end());
  out.token_ids.push_back(special.sep);
  out.token_type_ids.assign(out.token_ids.size(), 0);
  if (b) {
    out.token_ids.insert(out.token_ids.end(), b->begin(), b->end());
    out.token_ids.push_back(special.sep);
    out.token_type_ids.resize(out.token_ids.size(), 1);
  }
  return out;
}

absl::StatusOr<int64_t> WindowLimit(const pb::LongInput& long_input, const RequestOptions& options) {
  if (long_input.max_windows() < 0 || long_input.max_windows() > options.max_windows) {
    return absl::InvalidArgumentError(absl::StrCat("long_input.max_windows is ", long_input.max_windows(),
                                                   "; it must be in [0, ", options.max_windows,
                                                   "] (0: the server's --max_windows, ", options.max_windows, ")"));
  }
  return long_input.max_windows() == 0 ? options.max_windows : long_input.max_windows();
}

absl::StatusOr<WindowAggregate> WindowAggregateOf(const pb::LongInput& long_input) {
  switch (long_input.aggregate()) {
    case pb::LongInput::AGGREGATE_UNSPECIFIED:
    case pb::LongInput::AGGREGATE_MAX: return WindowAggregate::kMax;
    case pb::LongInput::AGGREGATE_MEAN: return WindowAggregate::kMean;
    case pb::LongInput::AGGREGATE_FIRST: return WindowAggregate::kFirst;
    default: return absl::InvalidArgumentError(absl::StrCat("unknown long_input.aggregate ", long_input.aggregate()));
  }
}

absl::StatusOr<InputWindows> EncodeInWindows(const pb::Sequence& in, const pb::LongInput& long_input,
                                             int64_t window_limit, WindowedText windowed, const TextLimits& limits,
                                             const model::ModelInfo& info, const RequestOptions& options) {
  InputWindows out;
  if (!WantsWindows(long_input)) {
    absl::StatusOr<model::Sequence> sequence = EncodeSequence(in, limits, info, options, &out.truncated);
    if (!sequence.ok()) return sequence.status();
    out.num_tokens = static_cast<int32_t>(sequence->token_ids.size());
    out.sequences.push_back(*std::move(sequence));
    return out;
  }
  if (absl::Status s = CheckTextInput(in, options); !s.ok()) return s;
  const model::Tokenizer& tokenizer = *options.tokenizer;
  absl::StatusOr<std::vector<int32_t>> first = TokenIds(tokenizer, in.text());
  if (!first.ok()) return first.status();
  std::optional<std::vector<int32_t>> second;
  if (in.has_text_pair()) {
    absl::StatusOr<std::vector<int32_t>> ids = TokenIds(tokenizer, in.text_pair());
    if (!ids.ok()) return ids.status();
    second = *std::move(ids);
  }
  std::vector<int32_t> long_text = *std::move(first);
  std::optional<std::vector<int32_t>> other;  // The text repeated in every window, of a pair.
  if (second) {
    other = std::move(long_text);
    long_text = *std::move(second);
    if (windowed == WindowedText::kFirst) std::swap(long_text, *other);
  }
  const int64_t n = static_cast<int64_t>(long_text.size());
  const int64_t others = other ? static_cast<int64_t>(other->size()) + 3 : 2;
  out.num_tokens = static_cast<int32_t>(n + others);
  absl::StatusOr<std::vector<TokenWindow>> windows =
      PlanWindows(n, limits.max_length - others, long_input.stride(), window_limit);
  if (!windows.ok()) return windows.status();
  const model::SpecialTokens& special = tokenizer.special_tokens();
  for (const TokenWindow& window : *windows) {
    const absl::Span<const int32_t> part = absl::MakeConstSpan(long_text).subspan(window.start, window.end - window.start);
    model::Sequence sequence;
    if (!other) {
      sequence = JoinSequence(part, std::nullopt, special);
    } else if (windowed == WindowedText::kSecond) {
      sequence = JoinSequence(*other, part, special);
    } else {
      sequence = JoinSequence(part, absl::MakeConstSpan(*other), special);
    }
    if (absl::Status s = model::ValidateSequence(info, sequence); !s.ok()) return s;
    out.sequences.push_back(std::move(sequence));
  }
  return out;
}

absl::Status CheckRequestTokens(int64_t tokens, const RequestOptions& options) {
  if (tokens > options.max_tokens_per_request) {
    return absl::InvalidArgumentError(absl::StrCat("the request needs ", tokens,
                                                   " tokens in all (windows included); the limit is ",
                                                   options.max_tokens_per_request, " (--max_tokens_per_request)"));
  }
  return absl::OkStatus();
}

int64_t TotalTokens(const std::vector<model::Sequence>& sequences) {
  int64_t total = 0;
  for (const model::Sequence& sequence : sequences) total += static_cast<int64_t>(sequence.token_ids.size());
  return total;
}

}  // namespace deberta::service
