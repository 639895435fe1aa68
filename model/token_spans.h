// What each content token of a text stands for in it, as token
// classification answers it (docs/tasks.md 1.2): its span in code points
// without the one word-boundary space a leading SentencePiece "▁" or GPT-2
// "Ġ" encodes, whether it is a space token (empty or whitespace-only span,
// in no word), and whether it begins a word. Torch-free.
#ifndef DEBERTA_MODEL_TOKEN_SPANS_H_
#define DEBERTA_MODEL_TOKEN_SPANS_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "model/tokenizer.h"

namespace deberta::model {

struct TokenSpan {
  int32_t start = 0;  // Code points of the text, half-open.
  int32_t end = 0;
  bool space = false;
  bool word_start = false;
};

// `tokens` as `tokenizer_kind`'s Tokenize(text) returned them ("spm" or
// "gpt2"), one span each.
std::vector<TokenSpan> TokenSpans(absl::string_view text, const std::vector<Token>& tokens,
                                  absl::string_view tokenizer_kind);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TOKEN_SPANS_H_
