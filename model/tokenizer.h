// Tokenizer: the checkpoint's own tokenizer, torch-free. SentencePiece for
// v2/v3/mDeBERTa folders (spm.model), GPT-2 byte-level BPE for v1 folders
// (vocab.json + merges.txt), each exactly as the authors' tokenizers (see
// tests/golden_tokenizers/README.md for every convention). Building model
// inputs from text (pairs, truncation, [MASK] in text) is text_encoding.h.
#ifndef DEBERTA_MODEL_TOKENIZER_H_
#define DEBERTA_MODEL_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "model/special_tokens.h"

namespace deberta::model {

struct Token {
  int32_t id = 0;
  std::string piece;  // SentencePiece piece, or GPT-2 byte-level symbol.
  // The bytes of the input text the token stands for, [begin, end) in
  // UTF-8 bytes (SentencePiece: of the text before normalization).
  int32_t begin = 0, end = 0;
};

// Immutable after loading; every method is thread-safe.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // The content tokens of `text` (UTF-8, any bytes; no special tokens
  // added). "[MASK]" written in text is plain text here, as for the
  // authors' tokenize(); EncodeMaskedText splits it out.
  virtual absl::StatusOr<std::vector<Token>> Tokenize(absl::string_view text) const = 0;

  // The text of content ids. Like the authors' decode(), the special ids
  // (pad, cls, sep, unk and mask) are dropped. InvalidArgument for an id
  // outside the vocabulary.
  virtual absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const = 0;

  // The piece of one id ("[MASK]" for the mask id); "" outside the vocabulary.
  virtual std::string Piece(int32_t id) const = 0;

  // Number of ids the tokenizer can produce, [MASK] included.
  virtual int32_t vocab_size() const = 0;
  // "spm" or "gpt2".
  virtual const char* kind() const = 0;

  const SpecialTokens& special_tokens() const { return special_tokens_; }

 protected:
  // The content ids of `ids` that Decode renders: InvalidArgument for an
  // id outside the vocabulary; the special ids (pad, cls, sep, unk, mask)
  // dropped, as the authors' decode() drops them (SentencePiece would
  // write " ⁇ " for [UNK]).
  absl::StatusOr<std::vector<int32_t>> ContentIds(absl::Span<const int32_t> ids) const;

  SpecialTokens special_tokens_;
};

// The tokenizer of checkpoint folder `dir`, chosen by its files: spm.model,
// else vocab.json + merges.txt. Special ids come from the tokenizer model,
// overridden by tokenizer_config.json's added tokens when it has them.
// FailedPrecondition naming the missing files when there are none;
// InvalidArgument for a file that cannot be read.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& dir);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TOKENIZER_H_
