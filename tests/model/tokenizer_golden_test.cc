// The tokenizers against the authors' own, on every record of the vendored
// golden tokenizer set (tests/golden_tokenizers, unchanged from
// shared/golden/tokenizers and checked against its SHA256SUMS): tokens,
// single and pair inputs, longest_first truncation, decoding, and text with
// [MASK] in it (the README's lstrip_split rule). Torch-free.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "model/demo_model.h"
#include "model/demo_tokenizer.h"
#include "model/text_encoding.h"
#include "model/tokenizer.h"
#include "nlohmann/json.hpp"
#include "tests/testing/sha256.h"

namespace deberta::model {
namespace {

using nlohmann::json;
using ::testing::ElementsAreArray;

std::string Dir() { return DEBERTA_GOLDEN_TOKENIZERS_DIR; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<int32_t> IdsOf(const std::vector<Token>& tokens) {
  std::vector<int32_t> ids;
  for (const Token& t : tokens) ids.push_back(t.id);
  return ids;
}

TEST(TokenizerGoldenFilesTest, VendoredFilesMatchSha256Sums) {
  std::istringstream sums(ReadFile(Dir() + "/SHA256SUMS"));
  std::string sum, name;
  int files = 0;
  while (sums >> sum >> name) {
    EXPECT_EQ(testing::Sha256Hex(ReadFile(Dir() + "/" + name)), sum) << name;
    ++files;
  }
  EXPECT_GE(files, 14);
}

class TokenizerGoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string folder = Dir() + "/" + GetParam();
    cases_ = json::parse(ReadFile(folder + "/cases.json"));
    auto tokenizer = LoadTokenizer(folder);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_ = *std::move(tokenizer);
  }
  json cases_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

TEST_P(TokenizerGoldenTest, SpecialIdsAndKind) {
  const json& special = cases_["special_ids"];
  const SpecialTokens& got = tokenizer_->special_tokens();
  EXPECT_EQ(got.pad, special["pad"]);
  EXPECT_EQ(got.cls, special["cls"]);
  EXPECT_EQ(got.sep, special["sep"]);
  EXPECT_EQ(got.unk, special["unk"]);
  EXPECT_EQ(got.mask, special["mask"]);
  EXPECT_EQ(tokenizer_->vocab_size(), cases_["vocab_size_with_mask"]);
  EXPECT_EQ(std::string(tokenizer_->kind()), cases_["kind"]);
}

TEST_P(TokenizerGoldenTest, TextsTokenizeEncodeAndDecode) {
  for (const json& record : cases_["texts"]) {
    const std::string text = record["text"], name = record["name"];
    auto tokens = tokenizer_->Tokenize(text);
    ASSERT_TRUE(tokens.ok()) << name << ": " << tokens.status();
    EXPECT_THAT(IdsOf(*tokens), ElementsAreArray(record["ids"].get<std::vector<int32_t>>())) << name;
    const json& pieces = record.contains("raw_spm_pieces") ? record["raw_spm_pieces"] : record["pieces"];
    std::vector<std::string> got_pieces;
    for (const Token& t : *tokens) got_pieces.push_back(t.piece);
    // SentencePiece's own pieces, or the reference's with [UNK].
    if (got_pieces != pieces.get<std::vector<std::string>>()) {
      EXPECT_THAT(got_pieces, ElementsAreArray(record["pieces"].get<std::vector<std::string>>())) << name;
    }
    auto encoded = EncodeText(*tokenizer_, text, std::nullopt, INT32_MAX, Truncation::kNone);
    ASSERT_TRUE(encoded.ok()) << name << ": " << encoded.status();
    EXPECT_THAT(encoded->input_ids, ElementsAreArray(record["input_ids"].get<std::vector<int32_t>>())) << name;
    EXPECT_THAT(encoded->token_type_ids, ::testing::Each(0)) << name;
    auto decoded = tokenizer_->Decode(record["ids"].get<std::vector<int32_t>>());
    ASSERT_TRUE(decoded.ok()) << name << ": " << decoded.status();
    EXPECT_EQ(*decoded, record["decoded"].get<std::string>()) << name;
  }
}

TEST_P(TokenizerGoldenTest, OffsetsPointIntoTheText) {
  for (const json& record : cases_["texts"]) {
    const std::string text = record["text"];
    auto tokens = tokenizer_->Tokenize(text);
    ASSERT_TRUE(tokens.ok());
    std::string covered;
    int32_t last_begin = 0;
    for (const Token& t : *tokens) {
      ASSERT_LE(0, t.begin);
      ASSERT_LE(t.begin, t.end);
      ASSERT_LE(t.end, static_cast<int32_t>(text.size())) << record["name"];
      EXPECT_GE(t.begin, last_begin) << record["name"];
      last_begin = t.begin;
      covered += text.substr(t.begin, t.end - t.begin);
    }
    // Byte-level BPE covers every byte exactly once.
    if (tokenizer_->kind() == std::string("gpt2")) {
      EXPECT_EQ(covered, text) << record["name"];
    }
  }
}

TEST_P(TokenizerGoldenTest, PairsAreClsASepBSep) {
  for (const json& record : cases_["pairs"]) {
    const std::string text = record["text"], pair = record["text_pair"];
    auto encoded = EncodeText(*tokenizer_, text, absl::string_view(pair), INT32_MAX, Truncation::kNone);
    ASSERT_TRUE(encoded.ok()) << encoded.status();
    EXPECT_THAT(encoded->input_ids, ElementsAreArray(record["input_ids"].get<std::vector<int32_t>>()))
        << record["name"];
    EXPECT_THAT(encoded->token_type_ids, ElementsAreArray(record["token_type_ids"].get<std::vector<int32_t>>()))
        << record["name"];
    EXPECT_FALSE(encoded->truncated);
  }
}

TEST_P(TokenizerGoldenTest, LongestFirstTruncation) {
  for (const json& record : cases_["truncation"]) {
    const std::string name = record["name"], text = record["text"];
    std::optional<std::string> pair;
    if (!record["text_pair"].is_null()) pair = record["text_pair"].get<std::string>();
    std::optional<absl::string_view> pair_view;
    if (pair) pair_view = *pair;
    auto encoded = EncodeText(*tokenizer_, text, pair_view, record["max_length"], Truncation::kLongestFirst);
    ASSERT_TRUE(encoded.ok()) << name << ": " << encoded.status();
    EXPECT_THAT(encoded->input_ids, ElementsAreArray(record["input_ids"].get<std::vector<int32_t>>())) << name;
    EXPECT_THAT(encoded->token_type_ids, ElementsAreArray(record["token_type_ids"].get<std::vector<int32_t>>()))
        << name;
    // Content ids (specials dropped by Decode) decode as the reference's.
    auto decoded = tokenizer_->Decode(encoded->input_ids);
    ASSERT_TRUE(decoded.ok()) << name;
    if (!pair) {
      EXPECT_EQ(*decoded, record["decoded"].get<std::string>()) << name;
    }
    int64_t full = 0;
    for (const json& n : record["full_lengths"]) full += n.get<int64_t>();
    EXPECT_EQ(encoded->full_length, full + (pair ? 3 : 2)) << name;
  }
}

TEST_P(TokenizerGoldenTest, MaskInTextFollowsLstripSplit) {
  for (const json& record : cases_["masked"]) {
    const json& want = record["lstrip_split"];
    std::vector<int32_t> positions;
    auto ids = EncodeMaskedText(*tokenizer_, record["text"].get<std::string>(), &positions);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_THAT(*ids, ElementsAreArray(want["input_ids"].get<std::vector<int32_t>>())) << record["name"];
    EXPECT_THAT(positions, ElementsAreArray(want["mask_positions"].get<std::vector<int32_t>>())) << record["name"];
  }
}

TEST_P(TokenizerGoldenTest, NoTruncationIsAnErrorNamingTheLengths) {
  auto encoded = EncodeText(*tokenizer_, "one two three four five six seven", std::nullopt, 4, Truncation::kNone);
  EXPECT_TRUE(absl::IsInvalidArgument(encoded.status()));
  EXPECT_THAT(encoded.status().message(), ::testing::HasSubstr("the limit is 4"));
}

INSTANTIATE_TEST_SUITE_P(Golden, TokenizerGoldenTest,
                         ::testing::Values("gpt2_v1_like", "spm_multilingual", "spm_v3_like"));

TEST(CharIndexTest, MapsByteRangesToCodePoints) {
  const std::string text = "a\xC3\xA9" "b\xF0\x9F\x99\x82" "c";  // a é b 🙂 c: bytes 0 1-2 3 4-7 8.
  const CharIndex chars(text);
  EXPECT_EQ(chars.Map(0, 1), (std::pair<int32_t, int32_t>{0, 1}));
  EXPECT_EQ(chars.Map(1, 3), (std::pair<int32_t, int32_t>{1, 2}));
  EXPECT_EQ(chars.Map(3, 8), (std::pair<int32_t, int32_t>{2, 4}));
  EXPECT_EQ(chars.Map(5, 6), (std::pair<int32_t, int32_t>{3, 4}));  // Inside the emoji: all of it.
  EXPECT_EQ(chars.Map(8, 9), (std::pair<int32_t, int32_t>{4, 5}));
  EXPECT_EQ(chars.Map(9, 9), (std::pair<int32_t, int32_t>{5, 5}));
}

TEST(TokenizerTest, DemoTokenizerFitsTheDemoModelAndRoundTrips) {
  auto tokenizer = DemoTokenizer();
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_LE((*tokenizer)->vocab_size(), DemoModelShape().vocab);
  EXPECT_GT((*tokenizer)->vocab_size(), 600);
  const SpecialTokens& special = (*tokenizer)->special_tokens();
  EXPECT_EQ(special.pad, kDemoPadId);
  EXPECT_EQ(special.cls, kDemoClsId);
  EXPECT_EQ(special.sep, kDemoSepId);
  EXPECT_EQ(special.unk, kDemoUnkId);
  EXPECT_EQ(special.mask, kDemoMaskId);
  const std::string text = "The capital of France is Paris, and the answer is 42!";
  auto tokens = (*tokenizer)->Tokenize(text);
  ASSERT_TRUE(tokens.ok());
  EXPECT_LT(tokens->size(), text.size() / 2);  // Merges were learned.
  auto decoded = (*tokenizer)->Decode(IdsOf(*tokens));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, text);
  // The same files every time.
  EXPECT_EQ(GetDemoTokenizerFiles().merges_txt, GetDemoTokenizerFiles().merges_txt);
}

TEST(TokenizerTest, AFolderWithoutTokenizerFilesNamesWhatIsMissing) {
  auto tokenizer = LoadTokenizer(::testing::TempDir());
  EXPECT_TRUE(absl::IsFailedPrecondition(tokenizer.status()));
  EXPECT_THAT(tokenizer.status().message(), ::testing::HasSubstr("spm.model"));
}

}  // namespace
}  // namespace deberta::model
