// Long inputs in windows for the sequence-level tasks (docs/tasks.md 3),
// checked on literal requests with the tc_authors_gpt2 golden case's
// GPT-2 tokenizer (a SentencePiece one would not load under the
// sanitizers, scripts/sanitize.sh): a text that fits is one window identical to the
// plain sequence; a pair windows its second text and repeats the first (or,
// for zero-shot, windows the premise and repeats each hypothesis); windows
// of stride 0 tile the text; every refusal (no room, bad stride, too many
// windows, too many tokens in all) comes before anything is queued and
// names its numbers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "model/tokenizer.h"
#include "service/tasks/classify.h"
#include "service/tasks/input_windows.h"
#include "service/tasks/zero_shot.h"

namespace deberta::service {
namespace {

namespace pb = serving::v1;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

class InputWindowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tokenizer = model::LoadTokenizer(std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/tc_authors_gpt2");
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_ = *std::move(tokenizer);
    info_.vocab_size = tokenizer_->vocab_size();
    info_.max_sequence_length = 512;
    info_.has_classifier = true;
    info_.labels = {"contradiction", "entailment", "neutral"};
    options_.tokenizer = tokenizer_.get();
    options_.max_windows = 16;
  }

  std::vector<int32_t> Ids(const std::string& text) const { return *TokenIds(*tokenizer_, text); }

  absl::StatusOr<InputWindows> Encode(const pb::Sequence& in, int64_t max_length, int32_t stride,
                                      WindowedText windowed = WindowedText::kSecond) {
    pb::LongInput long_input;
    long_input.set_mode(pb::LongInput::MODE_WINDOWS);
    long_input.set_stride(stride);
    return EncodeInWindows(in, long_input, options_.max_windows, windowed, {model::Truncation::kNone, max_length},
                           info_, options_);
  }

  static pb::Sequence Text(const std::string& text) {
    pb::Sequence in;
    in.set_text(text);
    return in;
  }

  static constexpr const char* kLong =
      "The tower was named after the engineer whose company designed it, and it was built for the world's fair "
      "held in Paris in the spring of the year the revolution turned one hundred.";

  std::unique_ptr<model::Tokenizer> tokenizer_;
  model::ModelInfo info_;
  RequestOptions options_;
};

TEST_F(InputWindowsTest, ATextThatFitsIsOneWindowIdenticalToThePlainSequence) {
  for (const pb::Sequence& in : {Text("Paris is in France."), [] {
         pb::Sequence pair = Text("Where is Paris?");
         pair.set_text_pair("Paris is in France.");
         return pair;
       }()}) {
    absl::StatusOr<InputWindows> windows = Encode(in, 64, 8);
    ASSERT_TRUE(windows.ok()) << windows.status();
    bool truncated = true;
    absl::StatusOr<model::Sequence> plain =
        EncodeSequence(in, {model::Truncation::kNone, 64}, info_, options_, &truncated);
    ASSERT_TRUE(plain.ok());
    ASSERT_EQ(windows->sequences.size(), 1u);
    EXPECT_EQ(windows->sequences[0].token_ids, plain->token_ids);
    EXPECT_EQ(windows->sequences[0].token_type_ids, plain->token_type_ids);
    EXPECT_EQ(windows->num_tokens, static_cast<int32_t>(plain->token_ids.size()));
    EXPECT_FALSE(windows->truncated);
  }
}

TEST_F(InputWindowsTest, StrideZeroTilesTheTextAndEachWindowIsClsWindowSep) {
  const std::vector<int32_t> ids = Ids(kLong);
  ASSERT_GT(ids.size(), 20u);
  absl::StatusOr<InputWindows> windows = Encode(Text(kLong), 12, 0);  // C = 10.
  ASSERT_TRUE(windows.ok()) << windows.status();
  EXPECT_EQ(windows->sequences.size(), (ids.size() + 9) / 10);
  EXPECT_EQ(windows->num_tokens, static_cast<int32_t>(ids.size() + 2));
  std::vector<int32_t> joined;
  const model::SpecialTokens& special = tokenizer_->special_tokens();
  for (const model::Sequence& window : windows->sequences) {
    ASSERT_GE(window.token_ids.size(), 3u);
    EXPECT_LE(window.token_ids.size(), 12u);
    EXPECT_EQ(window.token_ids.front(), special.cls);
    EXPECT_EQ(window.token_ids.back(), special.sep);
    joined.insert(joined.end(), window.token_ids.begin() + 1, window.token_ids.end() - 1);
  }
  EXPECT_EQ(joined, ids);
}

TEST_F(InputWindowsTest, APairWindowsItsSecondTextAndRepeatsTheFirstInEach) {
  pb::Sequence in = Text("Where is the tower?");
  in.set_text_pair(kLong);
  const std::vector<int32_t> query = Ids(in.text()), document = Ids(kLong);
  const int64_t max_length = static_cast<int64_t>(query.size()) + 3 + 10;  // C = 10.
  absl::StatusOr<InputWindows> windows = Encode(in, max_length, 4);         // Steps of 6.
  ASSERT_TRUE(windows.ok()) << windows.status();
  EXPECT_EQ(windows->num_tokens, static_cast<int32_t>(query.size() + document.size() + 3));
  ASSERT_EQ(windows->sequences.size(), 1 + (document.size() - 10 + 5) / 6);
  for (size_t k = 0; k < windows->sequences.size(); ++k) {
    const model::Sequence& window = windows->sequences[k];
    const size_t start = 6 * k, end = std::min(document.size(), start + 10);
    std::vector<int32_t> want = {tokenizer_->special_tokens().cls};
    want.insert(want.end(), query.begin(), query.end());
    want.push_back(tokenizer_->special_tokens().sep);
    const size_t first_part = want.size();
    want.insert(want.end(), document.begin() + start, document.begin() + end);
    want.push_back(tokenizer_->special_tokens().sep);
    EXPECT_EQ(window.token_ids, want) << "window " << k;
    std::vector<int32_t> types(first_part, 0);
    types.resize(want.size(), 1);
    EXPECT_EQ(window.token_type_ids, types) << "window " << k;
  }
}

TEST_F(InputWindowsTest, RefusalsNameTheirNumbers) {
  options_.max_windows = 3;
  const absl::Status too_many = Encode(Text(kLong), 7, 0).status();  // C = 5: more than 3 windows.
  EXPECT_TRUE(absl::IsInvalidArgument(too_many)) << too_many;
  EXPECT_THAT(too_many.message(), HasSubstr("at most 3"));
  const absl::Status stride = Encode(Text(kLong), 12, 10).status();  // C = 10.
  EXPECT_TRUE(absl::IsInvalidArgument(stride));
  EXPECT_THAT(stride.message(), HasSubstr("stride is 10; it must be in [0, 10)"));
  pb::Sequence pair = Text(kLong);
  pair.set_text_pair("short");
  const absl::Status no_room = Encode(pair, 16, 0).status();
  EXPECT_TRUE(absl::IsInvalidArgument(no_room));
  EXPECT_THAT(no_room.message(), HasSubstr("no room for a window"));
  pb::LongInput over;
  over.set_max_windows(4);
  EXPECT_THAT(WindowLimit(over, options_).status().message(), HasSubstr("it must be in [0, 3]"));
}

TEST_F(InputWindowsTest, TheWindowsOfARequestCountAgainstItsTokenLimitBeforeAnythingIsQueued) {
  pb::ClassifyRequest request;
  *request.add_sequences() = Text(kLong);
  request.set_max_length(12);
  request.mutable_long_input()->set_mode(pb::LongInput::MODE_WINDOWS);
  ASSERT_TRUE(BuildClassifyInputs(request, info_, options_).ok());
  const int64_t tokens = TotalTokens(BuildClassifyInputs(request, info_, options_)->sequences[0].sequences);
  options_.max_tokens_per_request = tokens - 1;
  const absl::Status refused = BuildClassifyInputs(request, info_, options_).status();
  EXPECT_TRUE(absl::IsInvalidArgument(refused));
  EXPECT_THAT(refused.message(), HasSubstr(absl::StrCat("needs ", tokens, " tokens")));
}

TEST_F(InputWindowsTest, TokenIdsCannotBeWindowed) {
  pb::ClassifyRequest request;
  pb::Sequence* ids = request.add_sequences();
  for (int32_t id : {1, 5, 2}) ids->add_token_ids(id);
  request.mutable_long_input()->set_mode(pb::LongInput::MODE_WINDOWS);
  EXPECT_THAT(BuildClassifyInputs(request, info_, options_).status().message(), HasSubstr("windows need text"));
}

TEST_F(InputWindowsTest, ZeroShotWindowsThePremiseWithRoomForTheLongestHypothesis) {
  pb::ZeroShotClassifyRequest request;
  request.set_text(kLong);
  request.add_candidate_labels("art");
  request.add_candidate_labels("engineering and architecture");
  request.set_max_length(40);
  request.mutable_long_input()->set_mode(pb::LongInput::MODE_WINDOWS);
  request.mutable_long_input()->set_aggregate(pb::LongInput::AGGREGATE_MEAN);
  absl::StatusOr<ZeroShotInputs> built = BuildZeroShotInputs(request, info_, options_);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->aggregate, WindowAggregate::kMean);
  const std::vector<int32_t> premise = Ids(kLong);
  const size_t longest = Ids("This example is engineering and architecture.").size();
  const size_t capacity = 40 - 3 - longest;
  ASSERT_EQ(built->windows.size(), (premise.size() + capacity - 1) / capacity);
  for (const std::vector<model::Sequence>& pairs : built->windows) {
    ASSERT_EQ(pairs.size(), 2u);
    // Both candidates see the same window of the premise.
    const int32_t sep = tokenizer_->special_tokens().sep;
    const auto premise_part = [sep](const model::Sequence& s) {
      return std::vector<int32_t>(s.token_ids.begin(), std::find(s.token_ids.begin(), s.token_ids.end(), sep));
    };
    EXPECT_THAT(premise_part(pairs[0]), ElementsAreArray(premise_part(pairs[1])));
    for (const model::Sequence& pair : pairs) EXPECT_LE(pair.token_ids.size(), 40u);
  }
}

}  // namespace
}  // namespace deberta::service
