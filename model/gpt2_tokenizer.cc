// GPT-2 byte-level BPE: pre-tokenizer, merges, byte decoding.
#include "model/gpt2_tokenizer.h"

#include <unicode/uchar.h>

#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "model/read_file.h"
#include "nlohmann/json.hpp"

namespace deberta::model {
namespace {

// One code point of a UTF-8 text: its value and byte range. A byte that
// does not start a valid sequence is one "code point" of its own, of no
// Unicode class (it can only be part of a [^\s\p{L}\p{N}] run).
struct CodePoint {
  uint32_t value;  // kInvalid for a stray byte.
  size_t begin, end;
};
constexpr uint32_t kInvalid = 0xFFFFFFFF;

// Length of the valid UTF-8 sequence at `s[i]`, or 0.
size_t ValidSequenceLength(absl::string_view s, size_t i, uint32_t* value) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) {
    *value = b0;
    return 1;
  }
  size_t n;
  uint8_t lo = 0x80, hi = 0xBF;  // Range of the second byte.
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  uint32_t v = b0 & (0xFF >> (n + 1));
  for (size_t k = 1; k < n; ++k) v = (v << 6) | (byte(i + k) & 0x3F);
  *value = v;
  return n;
}

std::vector<CodePoint> DecodeUtf8(absl::string_view s) {
  std::vector<CodePoint> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t value = 0;
    const size_t n = ValidSequenceLength(s, i, &value);
    if (n == 0) {
      out.push_back({kInvalid, i, i + 1});
      ++i;
    } else {
      out.push_back({value, i, i + n});
      i += n;
    }
  }
  return out;
}

bool IsLetter(uint32_t c) { return c != kInvalid && (U_GET_GC_MASK(c) & U_GC_L_MASK) != 0; }
bool IsNumber(uint32_t c) { return c != kInvalid && (U_GET_GC_MASK(c) & U_GC_N_MASK) != 0; }
// \s of the `regex` module: Unicode White_Space.
bool IsSpace(uint32_t c) { return c != kInvalid && u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE); }

void AppendUtf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Python's bytes.decode("utf-8", errors="replace"): one U+FFFD per maximal
// invalid subsequence (a lead byte and the continuation bytes that were
// valid so far count as one).
std::string DecodeBytesReplacing(absl::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    uint32_t value = 0;
    const size_t n = ValidSequenceLength(bytes, i, &value);
    if (n > 0) {
      out.append(bytes.data() + i, n);
      i += n;
      continue;
    }
    // The maximal prefix of a valid sequence that starts here.
    const uint8_t b0 = static_cast<uint8_t>(bytes[i]);
    size_t want = 0;
    uint8_t lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) want = 2;
    if (b0 >= 0xE0 && b0 <= 0xEF) want = 3, lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
    if (b0 >= 0xF0 && b0 <= 0xF4) want = 4, lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
    size_t taken = 1;
    while (want > 0 && taken < want && i + taken < bytes.size()) {
      const uint8_t b = static_cast<uint8_t>(bytes[i + taken]);
      const uint8_t low = taken == 1 ? lo : 0x80, high = taken == 1 ? hi : 0xBF;
      if (b < low || b > high) break;
      ++taken;
    }
    out += "\xEF\xBF\xBD";
    i += taken;
  }
  return out;
}

}  // namespace

std::array<std::string, 256> Gpt2Tokenizer::ByteSymbols() {
  // Printable Latin-1 bytes stand for themselves, the other 68 bytes for
  // U+0100 onwards in byte order.
  std::array<std::string, 256> symbols;
  int next = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    AppendUtf8(printable ? static_cast<uint32_t>(b) : static_cast<uint32_t>(256 + next++), &symbols[b]);
  }
  return symbols;
}

Gpt2Tokenizer::Gpt2Tokenizer() : byte_symbol_(ByteSymbols()) {
  for (int b = 0; b < 256; ++b) symbol_byte_[DecodeUtf8(byte_symbol_[b])[0].value] = static_cast<uint8_t>(b);
}

absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> Gpt2Tokenizer::Load(const std::string& dir) {
  const std::string vocab_path = dir + "/vocab.json", merges_path = dir + "/merges.txt";
  absl::StatusOr<std::string> vocab_text = ReadFileToString(vocab_path);
  if (!vocab_text.ok()) return vocab_text.status();
  absl::StatusOr<std::string> merges = ReadFileToString(merges_path);
  if (!merges.ok()) return merges.status();
  absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> tokenizer = FromText(*vocab_text, *merges, dir);
  if (!tokenizer.ok()) return tokenizer.status();
  absl::StatusOr<SpecialTokens> special = ReadSpecialTokens(dir, (*tokenizer)->special_tokens_);
  if (!special.ok()) return special.status();
  (*tokenizer)->special_tokens_ = *special;
  return tokenizer;
}

absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> Gpt2Tokenizer::FromText(const std::string& vocab_text,
                                                                       const std::string& merges_text,
                                                                       const std::string& source) {
  std::unique_ptr<Gpt2Tokenizer> tokenizer(new Gpt2Tokenizer());
  const std::string vocab_path = source + "/vocab.json", merges_path = source + "/merges.txt";
  const nlohmann::json vocab = nlohmann::json::parse(vocab_text, nullptr, /*allow_exceptions=*/false);
  if (!vocab.is_object()) return absl::InvalidArgumentError(absl::StrCat(vocab_path, " is not a JSON object"));
  for (const auto& [symbol, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= (int64_t{1} << 24)) {
      return absl::InvalidArgumentError(absl::StrCat(vocab_path, ": the id of '", symbol, "' is not a token id"));
    }
    const auto value = static_cast<int32_t>(id.get<int64_t>());
    tokenizer->ids_[symbol] = value;
    if (static_cast<size_t>(value) >= tokenizer->symbols_.size()) tokenizer->symbols_.resize(value + 1);
    tokenizer->symbols_[value] = symbol;
  }
  const std::string* merges = &merges_text;
  // "#version" line first, then "left right" per line in rank order; as
  // Hugging Face reads it, the text after the last newline is dropped.
  std::istringstream lines(*merges);
  std::string line;
  int rank = 0;
  const bool ends_with_newline = !merges->empty() && merges->back() == '\n';
  std::vector<std::string> all;
  while (std::getline(lines, line)) all.push_back(line);
  if (!ends_with_newline && !all.empty()) all.pop_back();
  for (size_t i = 0; i < all.size(); ++i) {
    if (i == 0 && all[i].rfind("#version", 0) == 0) continue;
    if (all[i].empty()) continue;
    if (all[i].find(' ') == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(merges_path, " line ", i + 1, " is not 'left right'"));
    }
    tokenizer->merge_rank_.emplace(all[i], rank++);
  }
  auto id_of = [&](const char* symbol, int fallback) {
    auto it = tokenizer->ids_.find(symbol);
    return it == tokenizer->ids_.end() ? fallback : it->second;
  };
  tokenizer->special_tokens_ = {id_of("[PAD]", 0), id_of("[CLS]", 1), id_of("[SEP]", 2), id_of("[UNK]", 3),
                                id_of("[MASK]", -1)};
  return tokenizer;
}

std::vector<absl::string_view> Gpt2Tokenizer::PreTokenize(absl::string_view text) {
  const std::vector<CodePoint> cps = DecodeUtf8(text);
  const size_t n = cps.size();
  std::vector<absl::string_view> out;
  auto emit = [&](size_t from, size_t to) {  // Code points [from, to).
    out.push_back(text.substr(cps[from].begin, cps[to - 1].end - cps[from].begin));
  };
  auto cp = [&](size_t i) { return i < n ? cps[i].value : kInvalid; };
  auto other = [&](size_t i) { return i < n && !IsSpace(cp(i)) && !IsLetter(cp(i)) && !IsNumber(cp(i)); };
  size_t i = 0;
  while (i < n) {
    // 's|'t|'re|'ve|'m|'ll|'d (lowercase only).
    if (cp(i) == '\'' && i + 1 < n) {
      const uint32_t a = cp(i + 1), b = cp(i + 2);
      if (a == 's' || a == 't' || a == 'm' || a == 'd') {
        emit(i, i + 2);
        i += 2;
        continue;
      }
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
        emit(i, i + 3);
        i += 3;
        continue;
      }
    }
    // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': one U+0020 may lead.
    const size_t start = i;
    const size_t body = cp(i) == ' ' ? i + 1 : i;
    bool (*same_class)(uint32_t) = nullptr;
    if (body < n && IsLetter(cp(body))) same_class = IsLetter;
    if (body < n && IsNumber(cp(body))) same_class = IsNumber;
    if (same_class != nullptr) {
      size_t j = body;
      while (j < n && same_class(cp(j))) ++j;
      emit(start, j);
      i = j;
      continue;
    }
    if (other(body)) {
      size_t j = body;
      while (other(j)) ++j;
      emit(start, j);
      i = j;
      continue;
    }
    // '\s+(?!\S)', else '\s+': a whitespace run leaves its last character
    // to the word after it.
    size_t j = i;
    while (j < n && IsSpace(cp(j))) ++j;
    if (j == i) {  // Unreachable: every code point is in some class above.
      emit(i, i + 1);
      ++i;
      continue;
    }
    if (j < n && j - i >= 2) --j;  // Followed by \S: keep the last one back.
    emit(i, j);
    i = j;
  }
  return out;
}

std::vector<std::string> Gpt2Tokenizer::Bpe(absl::string_view word) const {
  std::vector<std::string> parts;
  parts.reserve(word.size());
  for (unsigned char b : word) parts.push_back(byte_symbol_[b]);
  while (parts.size() > 1) {
    // The adjacent pair of lowest rank...
    int best = std::numeric_limits<int>::max();
    std::string best_pair;
    for (size_t k = 0; k + 1 < parts.size(); ++k) {
      std::string pair = absl::StrCat(parts[k], " ", parts[k + 1]);
      auto it = merge_rank_.find(pair);
      if (it != merge_rank_.end() && it->second < best) {
        best = it->second;
        best_pair = std::move(pair);
      }
    }
    if (best_pair.empty()) break;
    // ...merged at every occurrence, left to right.
    const size_t space = best_pair.find(' ');
    const std::string left = best_pair.substr(0, space), right = best_pair.substr(space + 1);
    std::vector<std::string> merged;
    merged.reserve(parts.size());
    for (size_t k = 0; k < parts.size(); ++k) {
      if (k + 1 < parts.size() && parts[k] == left && parts[k + 1] == right) {
        merged.push_back(left + right);
        ++k;
      } else {
        merged.push_back(std::move(parts[k]));
      }
    }
    parts = std::move(merged);
  }
  return parts;
}

absl::StatusOr<std::vector<Token>> Gpt2Tokenizer::Tokenize(absl::string_view text) const {
  std::vector<Token> tokens;
  for (absl::string_view word : PreTokenize(text)) {
    // Each symbol stands for as many bytes as its code points.
    auto begin = static_cast<int32_t>(word.data() - text.data());
    for (std::string& symbol : Bpe(word)) {
      auto it = ids_.find(symbol);
      // Every byte has a symbol, so only a vocabulary without some merge
      // result lands here.
      const int32_t id = it == ids_.end() ? special_tokens_.unk : it->second;
      const auto bytes = static_cast<int32_t>(DecodeUtf8(symbol).size());
      tokens.push_back({id, std::move(symbol), begin, begin + bytes});
      begin += bytes;
    }
  }
  return tokens;
}

absl::StatusOr<std::string> Gpt2Tokenizer::Decode(absl::Span<const int32_t> ids) const {
  absl::StatusOr<std::vector<int32_t>> content = ContentIds(ids);
  if (!content.ok()) return content.status();
  std::string bytes;
  for (int32_t id : *content) {
    for (const CodePoint& c : DecodeUtf8(symbols_[id])) {
      auto it = symbol_byte_.find(c.value);
      if (it == symbol_byte_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("token id ", id, " is not a byte-level symbol"));
      }
      bytes.push_back(static_cast<char>(it->second));
    }
  }
  return DecodeBytesReplacing(bytes);
}

}  // namespace deberta::model
