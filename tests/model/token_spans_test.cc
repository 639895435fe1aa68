// Token spans, space tokens and word starts (docs/tasks.md 1.2) from our
// tokenizers against the golden task cases, whose spans were derived from
// the authors' tokenizers and re-derived independently: every text of the
// SentencePiece cases (NFKC-rewritten characters, [UNK], whitespace runs, a
// text starting with a newline, a tab and a space) and of the GPT-2 case
// (emoji split across byte-level tokens, tabs and newlines).
#include "model/token_spans.h"

#include <gtest/gtest.h>

#include <fstream>

#include "nlohmann/json.hpp"

namespace deberta::model {
namespace {

using json = nlohmann::json;

void CheckCase(const std::string& name) {
  const std::string dir = std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/" + name;
  std::ifstream in(dir + "/expected.json");
  ASSERT_TRUE(in) << dir;
  const json c = json::parse(in);
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizer(dir);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  int tokens_checked = 0;
  for (const json& text : c["texts"]) {
    SCOPED_TRACE(::testing::Message() << name << " " << text["name"].get<std::string>());
    const std::string t = text["text"].get<std::string>();
    absl::StatusOr<std::vector<Token>> tokens = (*tokenizer)->Tokenize(t);
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    const json& want = text["tokens"];
    ASSERT_EQ(tokens->size(), want.size());
    const std::vector<TokenSpan> spans = TokenSpans(t, *tokens, (*tokenizer)->kind());
    for (size_t i = 0; i < spans.size(); ++i) {
      SCOPED_TRACE(::testing::Message() << "token " << i << " " << want[i]["piece"].get<std::string>());
      EXPECT_EQ((*tokens)[i].id, want[i]["id"].get<int32_t>());
      EXPECT_EQ(spans[i].start, want[i]["start"].get<int32_t>());
      EXPECT_EQ(spans[i].end, want[i]["end"].get<int32_t>());
      EXPECT_EQ(spans[i].space, want[i]["space"].get<bool>());
      EXPECT_EQ(spans[i].word_start, want[i]["word_start"].get<bool>());
      ++tokens_checked;
    }
  }
  EXPECT_GT(tokens_checked, 100);
}

TEST(TokenSpansGoldenTest, SentencePieceShortTexts) { CheckCase("tc_hf_spm"); }
TEST(TokenSpansGoldenTest, SentencePieceLongTexts) { CheckCase("long_tc_spm"); }
TEST(TokenSpansGoldenTest, Gpt2ByteLevelTexts) { CheckCase("tc_authors_gpt2"); }

TEST(TokenSpansTest, Gpt2DropsOneSpacePerMarkerAndSharesSplitCharacters) {
  // "ĠĠ" stands for two spaces: one is the word boundary, the other is the
  // token's whitespace-only span, a space token.
  const std::vector<Token> tokens{{1, "a", 0, 1}, {2, "\xC4\xA0\xC4\xA0", 1, 3}, {3, "b", 3, 4},
                                  // The 4 bytes of one emoji in two tokens: both span it.
                                  {4, "x", 4, 6}, {5, "y", 6, 8}};
  const std::vector<TokenSpan> spans = TokenSpans("a  b\xF0\x9F\x98\x80", tokens, "gpt2");
  EXPECT_EQ(spans[1].start, 2);
  EXPECT_EQ(spans[1].end, 3);
  EXPECT_TRUE(spans[1].space);
  EXPECT_TRUE(spans[2].word_start);  // After a space token.
  EXPECT_EQ(spans[3].start, 4);
  EXPECT_EQ(spans[3].end, 5);
  EXPECT_EQ(spans[4].start, 4);
  EXPECT_EQ(spans[4].end, 5);
  EXPECT_FALSE(spans[4].word_start);
}

}  // namespace
}  // namespace deberta::model
