// The tasks' request checks on literal requests (classify and fill-mask
// inputs): counts, validation, truncation, positions, top_k; no gRPC
// server, batcher or engine.
#include "service/request_builder.h"
#include "service/tasks/classify.h"
#include "service/tasks/fill_mask.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace deberta::service {
namespace {

namespace pb = serving::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

model::ModelInfo Info() {
  model::ModelInfo info;
  info.vocab_size = 100;
  info.max_sequence_length = 8;
  info.labels = {"a", "b", "c"};
  info.has_classifier = true;
  info.has_mlm_head = true;
  return info;
}

RequestOptions Options() {
  RequestOptions options;
  options.max_sequences_per_request = 3;
  options.mask_token_id = 4;
  return options;
}

pb::Sequence Ids(std::initializer_list<int32_t> ids) {
  pb::Sequence s;
  s.mutable_token_ids()->Add(ids.begin(), ids.end());
  return s;
}

pb::ClassifyRequest Classify(std::initializer_list<pb::Sequence> sequences, int top_k = 0) {
  pb::ClassifyRequest request;
  for (const auto& s : sequences) *request.add_sequences() = s;
  request.set_top_k(top_k);
  return request;
}

pb::FillMaskRequest FillMask(std::initializer_list<pb::Sequence> sequences, int top_k = 0) {
  pb::FillMaskRequest request;
  for (const auto& s : sequences) *request.add_sequences()->mutable_sequence() = s;
  request.set_top_k(top_k);
  return request;
}

TEST(BuildClassifyInputsTest, OneTaskPerSequenceInOrderWithAllLabelsByDefault) {
  auto built = BuildClassifyInputs(Classify({Ids({1, 9, 2}), Ids({1, 7, 7, 2})}), Info(), Options());
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_EQ(built->sequences.size(), 2u);
  EXPECT_EQ(built->top_k, 3);
  EXPECT_THAT(built->sequences[0].sequences.front().token_ids, ElementsAre(1, 9, 2));
  EXPECT_THAT(built->sequences[1].sequences.front().token_ids, ElementsAre(1, 7, 7, 2));
}

TEST(BuildClassifyInputsTest, TopKWithinTheLabels) {
  auto two = BuildClassifyInputs(Classify({Ids({1, 2})}, 2), Info(), Options());
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->top_k, 2);
  for (int bad : {-1, 4}) {
    auto built = BuildClassifyInputs(Classify({Ids({1, 2})}, bad), Info(), Options());
    EXPECT_TRUE(absl::IsInvalidArgument(built.status()));
    EXPECT_THAT(built.status().message(), HasSubstr("top_k is"));
  }
}

TEST(BuildClassifyInputsTest, CountsSequences) {
  auto none = BuildClassifyInputs(Classify({}), Info(), Options());
  EXPECT_THAT(none.status().message(), HasSubstr("no sequences"));
  auto many = BuildClassifyInputs(Classify({Ids({1}), Ids({1}), Ids({1}), Ids({1})}), Info(), Options());
  EXPECT_TRUE(absl::IsInvalidArgument(many.status()));
  EXPECT_THAT(many.status().message(), HasSubstr("the maximum is 3"));
}

TEST(BuildClassifyInputsTest, NamesTheBadSequence) {
  auto built = BuildClassifyInputs(Classify({Ids({1, 2}), Ids({1, 100})}), Info(), Options());
  EXPECT_TRUE(absl::IsInvalidArgument(built.status()));
  EXPECT_THAT(built.status().message(), HasSubstr("sequence 1: token id 100 at position 1"));
}

TEST(BuildClassifyInputsTest, WithoutAClassifierIsFailedPrecondition) {
  model::ModelInfo info = Info();
  info.has_classifier = false;
  EXPECT_TRUE(absl::IsFailedPrecondition(BuildClassifyInputs(Classify({Ids({1})}), info, Options()).status()));
}

TEST(BuildClassifyInputsTest, TruncatesToTheLimitKeepingTheLastTokenOnlyWhenAllowed) {
  const pb::Sequence long_one = Ids({1, 10, 11, 12, 13, 14, 15, 16, 17, 2});
  EXPECT_THAT(BuildClassifyInputs(Classify({long_one}), Info(), Options()).status().message(),
              HasSubstr("10 tokens; the maximum is 8"));
  RequestOptions options = Options();
  options.truncate = true;
  pb::Sequence typed = long_one;
  for (int i = 0; i < 10; ++i) typed.add_token_type_ids(i < 5 ? 0 : 1);
  auto built = BuildClassifyInputs(Classify({typed}), Info(), options);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_THAT(built->sequences[0].sequences.front().token_ids, ElementsAre(1, 10, 11, 12, 13, 14, 15, 2));
  EXPECT_THAT(built->sequences[0].sequences.front().token_type_ids, ElementsAre(0, 0, 0, 0, 0, 1, 1, 1));
}

TEST(BuildFillMaskInputsTest, PredictsEveryMaskSortedWithDefaultTopK) {
  auto tasks = BuildFillMaskInputs(FillMask({Ids({1, 4, 9, 4, 2})}), Info(), Options());
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 1u);
  const FillMaskInput& task = (*tasks)[0];
  EXPECT_THAT(task.input.positions, ElementsAre(1, 3));
  EXPECT_EQ(task.input.top_k, 5);
}

TEST(BuildFillMaskInputsTest, ExplicitPositionsAreSortedAndChecked) {
  pb::FillMaskRequest request = FillMask({}, 2);
  pb::FillMaskSequence* s = request.add_sequences();
  *s->mutable_sequence() = Ids({1, 9, 9, 9, 2});
  s->add_positions(3);
  s->add_positions(1);
  auto tasks = BuildFillMaskInputs(request, Info(), Options());
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  EXPECT_THAT((*tasks)[0].input.positions, ElementsAre(1, 3));
  EXPECT_EQ((*tasks)[0].input.top_k, 2);

  s->add_positions(3);
  EXPECT_THAT(BuildFillMaskInputs(request, Info(), Options()).status().message(),
              HasSubstr("sequence 0: position 3 is listed twice"));
  s->set_positions(2, 5);
  EXPECT_THAT(BuildFillMaskInputs(request, Info(), Options()).status().message(),
              HasSubstr("position 5 is outside the sequence"));
}

TEST(BuildFillMaskInputsTest, ASequenceWithoutMaskOrPositionsIsNamed) {
  auto tasks = BuildFillMaskInputs(FillMask({Ids({1, 4, 2}), Ids({1, 9, 2})}), Info(), Options());
  EXPECT_TRUE(absl::IsInvalidArgument(tasks.status()));
  EXPECT_THAT(tasks.status().message(), HasSubstr("sequence 1: no mask token (id 4)"));
}

TEST(BuildFillMaskInputsTest, TopKWithinTheVocabulary) {
  auto tasks = BuildFillMaskInputs(FillMask({Ids({1, 4, 2})}, 101), Info(), Options());
  EXPECT_TRUE(absl::IsInvalidArgument(tasks.status()));
  EXPECT_THAT(tasks.status().message(), HasSubstr("top_k is 101"));
  EXPECT_TRUE(BuildFillMaskInputs(FillMask({Ids({1, 4, 2})}, -3), Info(), Options()).status().code() ==
              absl::StatusCode::kInvalidArgument);
}

TEST(BuildFillMaskInputsTest, TopKAtMostTheServersMaximum) {
  RequestOptions options = Options();
  options.max_top_k = 10;
  EXPECT_TRUE(BuildFillMaskInputs(FillMask({Ids({1, 4, 2})}, 10), Info(), options).ok());
  auto over = BuildFillMaskInputs(FillMask({Ids({1, 4, 2})}, 11), Info(), options);
  EXPECT_TRUE(absl::IsInvalidArgument(over.status()));
  EXPECT_THAT(over.status().message(), HasSubstr("top_k is 11; it must be in [1, 10] (the server's --max_top_k)"));
}

TEST(BuildFillMaskInputsTest, PositionsTimesVocabularyWithinTheBudget) {
  RequestOptions options = Options();
  options.max_fill_mask_logits = 5 * 100;  // Five positions of the 100-token vocabulary.
  EXPECT_TRUE(BuildFillMaskInputs(FillMask({Ids({1, 4, 4, 2}), Ids({4, 4, 4})}), Info(), options).ok());
  // Six positions over two sequences: the request's total counts.
  auto over = BuildFillMaskInputs(FillMask({Ids({1, 4, 4, 2}), Ids({4, 4, 4, 4})}), Info(), options);
  EXPECT_TRUE(absl::IsInvalidArgument(over.status()));
  EXPECT_THAT(over.status().message(),
              HasSubstr("6 positions x 100 vocabulary = 600 logits; the limit is 500 (--max_fill_mask_logits)"));
}

TEST(BuildFillMaskInputsTest, CandidatesWithinTheResponseBudget) {
  RequestOptions options = Options();
  options.max_fill_mask_candidates = 20;
  EXPECT_TRUE(BuildFillMaskInputs(FillMask({Ids({1, 4, 4, 2})}, 10), Info(), options).ok());
  auto over = BuildFillMaskInputs(FillMask({Ids({1, 4, 4, 4, 2})}, 10), Info(), options);
  EXPECT_TRUE(absl::IsInvalidArgument(over.status()));
  EXPECT_THAT(over.status().message(), HasSubstr("3 positions x top_k 10 = 30 candidates; the limit is 20"));
}

TEST(BuildFillMaskInputsTest, WithoutAnMlmHeadIsFailedPrecondition) {
  model::ModelInfo info = Info();
  info.has_mlm_head = false;
  EXPECT_TRUE(absl::IsFailedPrecondition(BuildFillMaskInputs(FillMask({Ids({1, 4})}), info, Options()).status()));
}

}  // namespace
}  // namespace deberta::service
