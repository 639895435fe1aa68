// Model inputs from text, with the checkpoint's tokenizer: a single text
// as [CLS] a [SEP], a pair as [CLS] a [SEP] b [SEP] (token types 0 up to
// the first [SEP], 1 after), truncation to a length, and text with the mask
// token written in it. Conventions of tests/golden_tokenizers/README.md.
#ifndef DEBERTA_MODEL_TEXT_ENCODING_H_
#define DEBERTA_MODEL_TEXT_ENCODING_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/tokenizer.h"

namespace deberta::model {

enum class Truncation {
  kNone,          // Too long is an error.
  kLongestFirst,  // One token at a time from the end of the longer text (b on a tie).
  kOnlyFirst,     // From the end of the first text only.
  kOnlySecond,    // From the end of the second text only.
};

struct EncodedText {
  std::vector<int32_t> input_ids;
  std::vector<int32_t> token_type_ids;
  // Per input id: the UTF-8 bytes [begin, end) it stands for, in the text
  // (type 0) or the pair text (type 1); {0, 0} for special tokens.
  std::vector<std::pair<int32_t, int32_t>> offsets;
  int64_t full_length = 0;  // Tokens before truncation, special tokens included.
  bool truncated = false;
};

// Encodes `text` (and `text_pair`) to at most `max_length` tokens, special
// tokens included. InvalidArgument when it does not fit and `truncation`
// cannot make it (kNone, or the named text is too short), naming the
// lengths. REQUIRES: max_length >= 3 for a pair, >= 2 otherwise.
absl::StatusOr<EncodedText> EncodeText(const Tokenizer& tokenizer, absl::string_view text,
                                       std::optional<absl::string_view> text_pair, int64_t max_length,
                                       Truncation truncation);

// [CLS] ... [SEP] for a text with the literal, case-sensitive "[MASK]" in it:
// the text is split on it, each piece tokenized on its own (whitespace
// before a mask is dropped, as Hugging Face's mask token does: the README's
// lstrip_split), and the pieces joined with the mask id. `mask_positions`
// gets the masks' indices in the result. FailedPrecondition if the
// tokenizer has no mask id.
absl::StatusOr<std::vector<int32_t>> EncodeMaskedText(const Tokenizer& tokenizer, absl::string_view text,
                                                      std::vector<int32_t>* mask_positions);

// Byte offsets in a UTF-8 text to character (code point) offsets, as
// Python indexes a str. A range that starts or ends inside a character
// covers the whole character.
class CharIndex {
 public:
  explicit CharIndex(absl::string_view text);
  // [begin, end) in bytes -> [begin, end) in characters.
  std::pair<int32_t, int32_t> Map(int32_t begin, int32_t end) const;

 private:
  absl::string_view text_;
  std::vector<int32_t> starts_before_;  // Characters starting before byte b, b = 0..size.
};

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TEXT_ENCODING_H_
