// libFuzzer target: GPT-2 byte-level BPE (the golden v1 tokenizer's files)
// on arbitrary bytes as text, as text with [MASK], and as ids to decode;
// plus the tokenizer files themselves: the first bytes up to a NUL are
// vocab.json, the rest merges.txt. Byte-level BPE is lossless, so decoding
// what was tokenized must give the text back when it is valid UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "model/gpt2_tokenizer.h"
#include "model/text_encoding.h"

namespace {

const deberta::model::Tokenizer& Golden() {
  static auto* tokenizer = [] {
    auto loaded = deberta::model::LoadTokenizer(std::string(DEBERTA_GOLDEN_TOKENIZERS_DIR) + "/gpt2_v1_like");
    if (!loaded.ok()) std::abort();
    return loaded->release();
  }();
  return *tokenizer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const deberta::model::Tokenizer& tokenizer = Golden();
  auto tokens = tokenizer.Tokenize(text);
  if (!tokens.ok()) std::abort();
  std::vector<int32_t> ids;
  for (const auto& t : *tokens) {
    if (t.begin < 0 || t.end < t.begin || t.end > static_cast<int32_t>(size)) std::abort();
    ids.push_back(t.id);
  }
  auto decoded = tokenizer.Decode(ids);
  if (!decoded.ok()) std::abort();
  std::vector<int32_t> positions;
  (void)deberta::model::EncodeMaskedText(tokenizer, text, &positions);
  (void)deberta::model::EncodeText(tokenizer, text, text.substr(size / 2), 16,
                                   deberta::model::Truncation::kLongestFirst);
  std::vector<int32_t> raw;
  for (size_t i = 0; i + 1 < size; i += 2) raw.push_back(static_cast<int32_t>(data[i] | (data[i + 1] << 8)) - 100);
  (void)tokenizer.Decode(raw);
  const size_t nul = text.find('\0');
  if (nul != std::string::npos) {
    auto files = deberta::model::Gpt2Tokenizer::FromText(text.substr(0, nul), text.substr(nul + 1), "fuzz");
    if (files.ok()) (void)(*files)->Tokenize("fuzz me, tokenizer 123");
  }
  return 0;
}
