// Token spans, space tokens and word starts from a tokenizer's byte offsets.
#include "model/token_spans.h"

#include "absl/strings/match.h"
#include "model/text_encoding.h"

namespace deberta::model {
namespace {

// Python's str.isspace, which docs/tasks.md's whitespace follows.
bool IsWhitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

// The code points of UTF-8 `text`; a byte that starts no valid sequence is
// one code point of its own (it never counts as whitespace).
std::vector<char32_t> CodePoints(absl::string_view text) {
  std::vector<char32_t> out;
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    const int length = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
    char32_t c = length == 1 ? b : b & (0x7F >> length);
    size_t n = 1;
    for (; n < static_cast<size_t>(length) && i + n < text.size(); ++n) {
      const auto next = static_cast<unsigned char>(text[i + n]);
      if ((next & 0xC0) != 0x80) break;
      c = (c << 6) | (next & 0x3F);
    }
    if (n != static_cast<size_t>(length)) c = 0xFFFD, n = 1;  // A broken sequence: its first byte alone.
    out.push_back(c);
    // CharIndex counts every non-continuation byte as a character start;
    // so do we: continuation bytes are skipped one by one.
    i += 1;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  }
  return out;
}

bool StartsWithMarker(absl::string_view piece) {
  return absl::StartsWith(piece, "\xE2\x96\x81") || absl::StartsWith(piece, "\xC4\xA0");  // "▁", "Ġ".
}

}  // namespace

std::vector<TokenSpan> TokenSpans(absl::string_view text, const std::vector<Token>& tokens,
                                  absl::string_view tokenizer_kind) {
  const bool sentencepiece = tokenizer_kind == "spm";
  const CharIndex index(text);
  const std::vector<char32_t> chars = CodePoints(text);
  const auto size = static_cast<int32_t>(chars.size());
  const auto space_at = [&](int32_t c) { return c < size && IsWhitespace(chars[c]); };
  std::vector<TokenSpan> spans;
  spans.reserve(tokens.size());
  bool seen_word = false;
  for (const Token& token : tokens) {
    auto [start, end] = index.Map(token.begin, token.end);
    const bool marker = StartsWithMarker(token.piece);
    if (sentencepiece) {
      // SentencePiece's surface of a piece may hold whitespace its
      // normalizer removed (runs, leading and trailing), which belongs to
      // no token; a piece itself holds none but its "▁". An empty span
      // sits at the first character after the whitespace (the dummy
      // prefix: after any leading whitespace of the text).
      while (start < end && space_at(start)) ++start;
      while (end > start && space_at(end - 1)) --end;
      if (start == end) {
        while (space_at(start)) ++start;
        end = start;
      }
    } else if (marker && start < end && space_at(start)) {
      ++start;  // The one space "Ġ" encodes.
    }
    TokenSpan span{start, end, true, false};
    for (int32_t c = start; c < end && span.space; ++c) span.space = space_at(c);
    if (!span.space) {
      span.word_start = !seen_word || marker || spans.back().space;
      seen_word = true;
    }
    spans.push_back(span);
  }
  return spans;
}

}  // namespace deberta::model
