// Token classification's answer from per-token probabilities (docs/tasks.md
// 1.3, as transformers' TokenClassificationPipeline): one entity per token
// (none), grouped B-/I- runs of them (simple), or one entity per word
// (first, average, max) then grouped; labels in the ignore list dropped.
// Plain data in and out: no proto, no LibTorch.
#ifndef DEBERTA_SERVICE_TASKS_TOKEN_ENTITIES_H_
#define DEBERTA_SERVICE_TASKS_TOKEN_ENTITIES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace deberta::service {

// One content token of a text (docs/tasks.md 1.2).
struct TextToken {
  int32_t index = 0;   // Its position in the whole tokenized sequence ([CLS] = 0).
  int32_t start = -1;  // Its span of the text in code points, half-open;
  int32_t end = -1;    // -1 for both when the input was token ids.
  bool space = false;       // A space token: empty or whitespace-only span, in no word.
  bool word_start = false;  // Begins a word.
};

enum class EntityAggregation { kNone, kSimple, kFirst, kAverage, kMax };

struct TokenEntity {
  std::string label;  // `entity` (kNone) or `entity_group` (the others).
  float score = 0;
  int32_t start = -1, end = -1;  // Code points, half-open.
  int32_t index = -1;            // The token's position for kNone; -1 when grouped.
};

// `probabilities[t]` is tokens[t]'s softmax over `labels` (same length).
// Entities whose label is in `ignore_labels` are dropped after grouping
// (per token for kNone). Word strategies read TextToken::space and
// word_start; the caller checks that they have text (spans) to read.
std::vector<TokenEntity> AggregateEntities(const std::vector<TextToken>& tokens,
                                           const std::vector<std::vector<float>>& probabilities,
                                           const std::vector<std::string>& labels, EntityAggregation aggregation,
                                           const std::vector<std::string>& ignore_labels);

// text[start:end] in code points of UTF-8 `text` (clamped to the text;
// empty when start >= end).
std::string CodePointSubstring(absl::string_view text, int32_t start, int32_t end);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_TOKEN_ENTITIES_H_
