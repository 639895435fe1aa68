// Gpt2Tokenizer: the byte-level BPE of v1 checkpoints (vocab.json +
// merges.txt), as the authors' GPT2Tokenizer: GPT-2's pre-tokenizer
// (Unicode letters, numbers and White_Space from ICU), UTF-8 bytes mapped
// to GPT-2's byte symbols, then the lowest-rank merge applied repeatedly.
// Ids are read from vocab.json and ranks from merges.txt.
#ifndef DEBERTA_MODEL_GPT2_TOKENIZER_H_
#define DEBERTA_MODEL_GPT2_TOKENIZER_H_

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/tokenizer.h"

namespace deberta::model {

class Gpt2Tokenizer final : public Tokenizer {
 public:
  // Reads `dir`/vocab.json and `dir`/merges.txt; special ids as
  // LoadTokenizer describes ([MASK] from vocab.json).
  static absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> Load(const std::string& dir);
  // From the two files' contents; special ids from vocab.json's [PAD],
  // [CLS], [SEP], [UNK] and [MASK]. `source` names them in errors.
  static absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> FromText(const std::string& vocab_json,
                                                                 const std::string& merges_txt,
                                                                 const std::string& source);

  // GPT-2's bytes_to_unicode(): the symbol (UTF-8) of each byte.
  static std::array<std::string, 256> ByteSymbols();

  absl::StatusOr<std::vector<Token>> Tokenize(absl::string_view text) const override;
  absl::StatusOr<std::string> Decode(absl::Span<const int32_t> ids) const override;
  std::string Piece(int32_t id) const override {
    return id >= 0 && id < vocab_size() ? symbols_[id] : std::string();
  }
  int32_t vocab_size() const override { return static_cast<int32_t>(symbols_.size()); }
  const char* kind() const override { return "gpt2"; }

  // GPT-2's pre-tokenization of `text` into byte ranges (exposed for tests):
  // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  static std::vector<absl::string_view> PreTokenize(absl::string_view text);

 private:
  Gpt2Tokenizer();
  // The byte-level symbols of one pre-token after every merge.
  std::vector<std::string> Bpe(absl::string_view word) const;

  std::array<std::string, 256> byte_symbol_;             // Byte -> its symbol (UTF-8).
  std::unordered_map<uint32_t, uint8_t> symbol_byte_;    // Symbol code point -> byte.
  std::unordered_map<std::string, int32_t> ids_;         // vocab.json.
  std::vector<std::string> symbols_;                     // Id -> symbol.
  std::unordered_map<std::string, int> merge_rank_;      // "left right" -> rank.
};

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_GPT2_TOKENIZER_H_
