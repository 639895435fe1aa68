// Input validation shared by every Engine implementation and the service.
#include "model/engine.h"

#include <unordered_set>

#include "absl/strings/str_cat.h"

namespace deberta::model {

absl::Status ValidateSequence(const ModelInfo& info, const Sequence& sequence) {
  const auto& ids = sequence.token_ids;
  if (ids.empty()) return absl::InvalidArgumentError("sequence is empty");
  if (static_cast<int64_t>(ids.size()) > info.max_sequence_length) {
    return absl::InvalidArgumentError(absl::StrCat("sequence has ", ids.size(),
                                                   " tokens; the maximum is ",
                                                   info.max_sequence_length));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= info.vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("token id ", ids[i], " at position ", i,
                                                     " is outside the vocabulary [0, ",
                                                     info.vocab_size, ")"));
    }
  }
  const auto& types = sequence.token_type_ids;
  if (types.empty()) return absl::OkStatus();
  if (types.size() != ids.size()) {
    return absl::InvalidArgumentError(absl::StrCat("token_type_ids has ", types.size(),
                                                   " entries but token_ids has ", ids.size()));
  }
  // Models without a segment table ignore token types (docs/deberta-model.md section 12.7), whatever
  // the tokenizer put there; only negative values are rejected.
  const int64_t limit = info.type_vocab_size > 0 ? info.type_vocab_size : INT32_MAX;
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] < 0 || types[i] >= limit) {
      return absl::InvalidArgumentError(absl::StrCat("token type id ", types[i], " at position ",
                                                     i, " is outside [0, ", limit, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateMaskedSequence(const ModelInfo& info, const MaskedSequence& input) {
  if (absl::Status s = ValidateSequence(info, input.sequence); !s.ok()) return s;
  if (input.positions.empty()) {
    return absl::InvalidArgumentError("no positions to predict (no mask token)");
  }
  if (input.top_k < 1 || input.top_k > info.vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat("top_k is ", input.top_k, "; it must be in [1, ",
                                                   info.vocab_size, "]"));
  }
  std::unordered_set<int32_t> seen;
  const int64_t length = static_cast<int64_t>(input.sequence.token_ids.size());
  for (int32_t p : input.positions) {
    if (p < 0 || p >= length) {
      return absl::InvalidArgumentError(absl::StrCat("position ", p, " is outside the sequence of ",
                                                     length, " tokens"));
    }
    if (!seen.insert(p).second) {
      return absl::InvalidArgumentError(absl::StrCat("position ", p, " is listed twice"));
    }
  }
  return absl::OkStatus();
}

}  // namespace deberta::model
