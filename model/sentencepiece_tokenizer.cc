// SentencePiece tokenization and decoding with the authors' conventions.
#include "model/sentencepiece_tokenizer.h"

#include "absl/strings/str_cat.h"

namespace deberta::model {

absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> SentencePieceTokenizer::Load(const std::string& dir) {
  std::unique_ptr<SentencePieceTokenizer> tokenizer(new SentencePieceTokenizer());
  std::string error;
  tokenizer->model_ = NewSentencePieceModel(&error);
  if (tokenizer->model_ == nullptr) return absl::FailedPreconditionError(error);
  const std::string path = dir + "/spm.model";
  if (error = tokenizer->model_->Load(path); !error.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot load ", path, ": ", error));
  }
  const SentencePieceModel& model = *tokenizer->model_;
  // The authors' SPMTokenizer: the control pieces by name, [MASK] appended
  // after the last piece (spm.model has no [MASK] piece).
  const SpecialTokens from_model{model.PieceToId("[PAD]"), model.PieceToId("[CLS]"), model.PieceToId("[SEP]"),
                                 model.unk_id(), model.PieceSize()};
  absl::StatusOr<SpecialTokens> special = ReadSpecialTokens(dir, from_model);
  if (!special.ok()) return special.status();
  tokenizer->special_tokens_ = *special;
  return tokenizer;
}

absl::StatusOr<std::vector<Token>> SentencePieceTokenizer::Tokenize(absl::string_view text) const {
  std::vector<SentencePieceModel::Piece> pieces;
  if (std::string error = model_->Encode(std::string(text), &pieces); !error.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("SentencePiece cannot encode the text: ", error));
  }
  std::vector<Token> tokens(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    tokens[i] = {pieces[i].id, std::move(pieces[i].piece), pieces[i].begin, pieces[i].end};
  }
  return tokens;
}

std::string SentencePieceTokenizer::Piece(int32_t id) const {
  if (id == special_tokens_.mask) return "[MASK]";
  return id >= 0 && id < model_->PieceSize() ? model_->IdToPiece(id) : std::string();
}

absl::StatusOr<std::string> SentencePieceTokenizer::Decode(absl::Span<const int32_t> ids) const {
  // SentencePiece would also fail on [MASK], which is not one of its pieces.
  absl::StatusOr<std::vector<int32_t>> content_ids = ContentIds(ids);
  if (!content_ids.ok()) return content_ids.status();
  const std::vector<int> content(content_ids->begin(), content_ids->end());
  std::string text;
  if (std::string error = model_->Decode(content, &text); !error.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("SentencePiece cannot decode the ids: ", error));
  }
  return text;
}

}  // namespace deberta::model
