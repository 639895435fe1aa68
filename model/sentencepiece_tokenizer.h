// SentencePieceTokenizer: the tokenizer of v2, v3 and mDeBERTa checkpoints
// (spm.model), as the authors' SPMTokenizer: [PAD] [CLS] [SEP] [UNK] are
// pieces 0-3, [MASK] is the id after the last piece, and unknown text is
// [UNK] (or byte pieces with byte fallback).
#ifndef DEBERTA_MODEL_SENTENCEPIECE_TOKENIZER_H_
#define DEBERTA_MODEL_SENTENCEPIECE_TOKENIZER_H_

#include "model/sentencepiece_model.h"
#include "model/tokenizer.h"

namespace deberta::model {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Reads `dir`/spm.model; special ids as LoadTokenizer describes.
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> Load(const std::string& dir);

  absl::StatusOr<std::vector<Token>> Tokenize(absl::string_view text) const override;
  absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const override;
  std::string Piece(int32_t id) const override;
  int32_t vocab_size() const override { return model_->PieceSize() + 1; }
  const char* kind() const override { return "spm"; }

 private:
  SentencePieceTokenizer() = default;
  std::unique_ptr<SentencePieceModel> model_;
};

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_SENTENCEPIECE_TOKENIZER_H_
