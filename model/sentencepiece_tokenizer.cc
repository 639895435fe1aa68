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
  const SpecialTokens& special = special_tokens_;
  std::vector<int> content;
  content.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      return absl::InvalidArgumentError(absl::StrCat("token id ", id, " is outside the vocabulary [0, ",
                                                     vocab_size(), ")"));
    }
    // As the authors' decode(): every special token goes, [UNK] included
    // (SentencePiece would write " ⁇ " for it, and fails on [MASK]).
    if (id == special.pad || id == special.cls || id == special.sep || id == special.unk || id == special.mask) {
      continue;
    }
    content.push_back(id);
  }
  std::string text;
  if (std::string error = model_->Decode(content, &text); !error.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("SentencePiece cannot decode the ids: ", error));
  }
  return text;
}

}  // namespace deberta::model
