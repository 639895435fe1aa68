// Choosing the tokenizer from a checkpoint folder's files.
#include "model/tokenizer.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "model/gpt2_tokenizer.h"
#include "model/sentencepiece_tokenizer.h"

namespace deberta::model {

absl::StatusOr<std::vector<int32_t>> Tokenizer::ContentIds(absl::Span<const int32_t> ids) const {
  const SpecialTokens& special = special_tokens_;
  std::vector<int32_t> content;
  content.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      return absl::InvalidArgumentError(absl::StrCat("token id ", id, " is outside the vocabulary [0, ",
                                                     vocab_size(), ")"));
    }
    if (id == special.pad || id == special.cls || id == special.sep || id == special.unk || id == special.mask) {
      continue;
    }
    content.push_back(id);
  }
  return content;
}

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::exists(fs::path(dir) / "spm.model", error)) {
    absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> spm = SentencePieceTokenizer::Load(dir);
    if (!spm.ok()) return spm.status();
    return std::unique_ptr<Tokenizer>(*std::move(spm));
  }
  const bool vocab = fs::exists(fs::path(dir) / "vocab.json", error);
  const bool merges = fs::exists(fs::path(dir) / "merges.txt", error);
  if (vocab && merges) {
    absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> gpt2 = Gpt2Tokenizer::Load(dir);
    if (!gpt2.ok()) return gpt2.status();
    return std::unique_ptr<Tokenizer>(*std::move(gpt2));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "no tokenizer in ", dir, ": it needs spm.model (DeBERTa v2, v3, mDeBERTa) or vocab.json and merges.txt (v1)",
      vocab ? "; merges.txt is missing" : "", merges ? "; vocab.json is missing" : ""));
}

}  // namespace deberta::model
