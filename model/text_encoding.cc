// Pairs, truncation and [MASK] in text.
#include "model/text_encoding.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace deberta::model {
namespace {

absl::StatusOr<std::vector<int32_t>> Ids(const Tokenizer& tokenizer, absl::string_view text) {
  absl::StatusOr<std::vector<Token>> tokens = tokenizer.Tokenize(text);
  if (!tokens.ok()) return tokens.status();
  std::vector<int32_t> ids;
  ids.reserve(tokens->size());
  for (const Token& token : *tokens) ids.push_back(token.id);
  return ids;
}

// Appends `tokens` (their ids and offsets) to `out`.
void Append(const std::vector<Token>& tokens, EncodedText* out) {
  for (const Token& t : tokens) {
    out->input_ids.push_back(t.id);
    out->offsets.emplace_back(t.begin, t.end);
  }
}

void AppendSpecial(int32_t id, EncodedText* out) {
  out->input_ids.push_back(id);
  out->offsets.emplace_back(0, 0);
}

// Python's str.isspace(), which str.rstrip() uses: Unicode White_Space plus
// the separators U+001C-U+001F. Only the ASCII and common cases matter for
// the text before a mask; the others are decoded from UTF-8 here.
size_t TrailingWhitespaceBytes(absl::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    const unsigned char c = static_cast<unsigned char>(s[end - 1]);
    if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F)) {
      --end;
      continue;
    }
    // Multi-byte spaces: U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028,
    // U+2029, U+202F, U+205F, U+3000.
    static constexpr const char* kSpaces[] = {"\xC2\x85", "\xC2\xA0", "\xE1\x9A\x80", "\xE2\x80\xA8",
                                              "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F", "\xE3\x80\x80"};
    bool found = false;
    for (const char* space : kSpaces) {
      const absl::string_view sv(space);
      if (end >= sv.size() && s.substr(end - sv.size(), sv.size()) == sv) {
        end -= sv.size();
        found = true;
        break;
      }
    }
    if (!found && end >= 3 && s.substr(end - 3, 2) == "\xE2\x80") {
      const unsigned char last = static_cast<unsigned char>(s[end - 1]);
      if (last >= 0x80 && last <= 0x8A) {  // U+2000-U+200A.
        end -= 3;
        found = true;
      }
    }
    if (!found) break;
  }
  return s.size() - end;
}

}  // namespace

absl::StatusOr<EncodedText> EncodeText(const Tokenizer& tokenizer, absl::string_view text,
                                       std::optional<absl::string_view> text_pair, int64_t max_length,
                                       Truncation truncation) {
  const SpecialTokens& special = tokenizer.special_tokens();
  absl::StatusOr<std::vector<Token>> a = tokenizer.Tokenize(text);
  if (!a.ok()) return a.status();
  std::vector<Token> b;
  if (text_pair.has_value()) {
    absl::StatusOr<std::vector<Token>> tokens = tokenizer.Tokenize(*text_pair);
    if (!tokens.ok()) return tokens.status();
    b = *std::move(tokens);
  }
  const int64_t specials = text_pair.has_value() ? 3 : 2;
  EncodedText out;
  out.full_length = static_cast<int64_t>(a->size() + b.size()) + specials;
  const int64_t budget = max_length - specials;
  if (budget < 0) return absl::InvalidArgumentError(absl::StrCat("max_length ", max_length, " is too small"));
  auto size = [](const std::vector<Token>& v) { return static_cast<int64_t>(v.size()); };
  if (size(*a) + size(b) > budget) {
    const std::string lengths = absl::StrCat("the input is ", out.full_length, " tokens; the limit is ", max_length);
    switch (truncation) {
      case Truncation::kNone:
        return absl::InvalidArgumentError(absl::StrCat(lengths, " (no truncation was asked for)"));
      case Truncation::kLongestFirst:
        // One token at a time from the longer text; ties take from b.
        while (size(*a) + size(b) > budget) {
          if (size(*a) > size(b)) {
            a->pop_back();
          } else {
            b.pop_back();
          }
        }
        break;
      case Truncation::kOnlyFirst:
        if (size(b) > budget) return absl::InvalidArgumentError(absl::StrCat(lengths, ", and only_first cannot fit the second text"));
        a->resize(budget - size(b));
        break;
      case Truncation::kOnlySecond:
        if (!text_pair.has_value() || size(*a) > budget) {
          return absl::InvalidArgumentError(absl::StrCat(lengths, ", and only_second cannot fit the first text"));
        }
        b.resize(budget - size(*a));
        break;
    }
    out.truncated = true;
  }
  out.input_ids.reserve(size(*a) + size(b) + specials);
  AppendSpecial(special.cls, &out);
  Append(*a, &out);
  AppendSpecial(special.sep, &out);
  out.token_type_ids.assign(out.input_ids.size(), 0);
  if (text_pair.has_value()) {
    Append(b, &out);
    AppendSpecial(special.sep, &out);
    out.token_type_ids.resize(out.input_ids.size(), 1);
  }
  return out;
}

absl::StatusOr<std::vector<int32_t>> EncodeMaskedText(const Tokenizer& tokenizer, absl::string_view text,
                                                      std::vector<int32_t>* mask_positions) {
  const SpecialTokens& special = tokenizer.special_tokens();
  if (special.mask < 0) return absl::FailedPreconditionError("the tokenizer has no [MASK] token");
  constexpr absl::string_view kMask = "[MASK]";
  std::vector<int32_t> ids{special.cls};
  mask_positions->clear();
  size_t from = 0;
  while (true) {
    const size_t at = text.find(kMask, from);
    absl::string_view segment = text.substr(from, at == absl::string_view::npos ? absl::string_view::npos : at - from);
    if (at != absl::string_view::npos) segment.remove_suffix(TrailingWhitespaceBytes(segment));
    absl::StatusOr<std::vector<int32_t>> segment_ids = Ids(tokenizer, segment);
    if (!segment_ids.ok()) return segment_ids.status();
    ids.insert(ids.end(), segment_ids->begin(), segment_ids->end());
    if (at == absl::string_view::npos) break;
    mask_positions->push_back(static_cast<int32_t>(ids.size()));
    ids.push_back(special.mask);
    from = at + kMask.size();
  }
  ids.push_back(special.sep);
  return ids;
}

CharIndex::CharIndex(absl::string_view text) : text_(text), starts_before_(text.size() + 1, 0) {
  for (size_t b = 0; b < text.size(); ++b) {
    const bool starts = (static_cast<unsigned char>(text[b]) & 0xC0) != 0x80;
    starts_before_[b + 1] = starts_before_[b] + (starts ? 1 : 0);
  }
}

std::pair<int32_t, int32_t> CharIndex::Map(int32_t begin, int32_t end) const {
  const auto size = static_cast<int32_t>(text_.size());
  begin = std::clamp(begin, 0, size);
  end = std::clamp(end, begin, size);
  const bool at_start = begin == size || (static_cast<unsigned char>(text_[begin]) & 0xC0) != 0x80;
  // Inside a character: the one that started before.
  const int32_t first = starts_before_[begin] - (at_start || begin == 0 ? 0 : 1);
  return {first, std::max(first, starts_before_[end])};
}

}  // namespace deberta::model
