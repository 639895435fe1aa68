// Windows over long inputs against the golden task cases (docs/tasks.md 3):
// the windows of every classification text and rerank document at each
// stride, the max / mean / first aggregates of their scores, and the
// refusals (too many windows naming both numbers, stride out of range, no
// room after a pair's first text).
#include "service/tasks/long_input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "nlohmann/json.hpp"

namespace deberta::service {
namespace {

using json = nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;

json ReadCase(const std::string& name) {
  std::ifstream in(std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/" + name + "/expected.json");
  EXPECT_TRUE(in) << name;
  return json::parse(in);
}

void ExpectWindows(const absl::StatusOr<std::vector<TokenWindow>>& got, const json& want) {
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), want.size());
  for (size_t w = 0; w < want.size(); ++w) {
    EXPECT_EQ((*got)[w].start, want[w]["start"].get<int32_t>()) << "window " << w;
    EXPECT_EQ((*got)[w].end, want[w]["end"].get<int32_t>()) << "window " << w;
  }
}

void ExpectScores(const std::vector<float>& got, const json& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t l = 0; l < got.size(); ++l) {
    const double w = want[l].get<double>();
    EXPECT_NEAR(got[l], w, 1e-4 + 1e-4 * std::abs(w)) << "label " << l;
  }
}

TEST(LongInputGoldenTest, ClassificationWindowsAndAggregates) {
  const json c = ReadCase("long_cls_spm");
  for (const json& text : c["texts"]) {
    for (const auto& [stride, at] : text["strides"].items()) {
      SCOPED_TRACE(::testing::Message() << text["name"].get<std::string>() << " stride " << stride);
      ExpectWindows(PlanWindows(text["n_content"].get<int64_t>(), text["C"].get<int64_t>(), std::stoi(stride), 100),
                    at["windows"]);
      std::vector<std::vector<float>> scores;
      for (const json& w : at["windows"]) scores.push_back(w["probabilities"].get<std::vector<float>>());
      ExpectScores(AggregateWindowScores(scores, WindowAggregate::kMax), at["aggregates"]["max"]);
      ExpectScores(AggregateWindowScores(scores, WindowAggregate::kMean), at["aggregates"]["mean"]);
      ExpectScores(AggregateWindowScores(scores, WindowAggregate::kFirst), at["aggregates"]["first"]);
    }
  }
}

TEST(LongInputGoldenTest, RerankDocumentWindowsAndScores) {
  const json c = ReadCase("rerank_spm");
  const json& windows = c["windows"];
  const int64_t capacity = windows["C"].get<int64_t>(), stride = windows["stride"].get<int64_t>();
  for (const json& document : windows["documents"]) {
    SCOPED_TRACE(::testing::Message() << "document " << document["index"].get<int>());
    const json& last = document["windows"].back();
    ExpectWindows(PlanWindows(last["end"].get<int64_t>(), capacity, stride, 100), document["windows"]);
    std::vector<std::vector<float>> scores;
    for (const json& w : document["windows"]) scores.push_back({w["score"].get<float>()});
    ExpectScores(AggregateWindowScores(scores, WindowAggregate::kMax), json::array({document["score"]}));
    ExpectScores(AggregateWindowScores(scores, WindowAggregate::kMean), json::array({document["mean_score"]}));
  }
}

TEST(LongInputTest, RefusalsNameTheirNumbers) {
  // long_cls_spm's refusals: its longest text (381 tokens) needs 8 windows
  // of C = 62 at stride 16, and the request allows 3; a pair whose first
  // text (45 tokens) leaves C = 32 - 3 - 45.
  const auto too_many = PlanWindows(381, 62, 16, 3);
  EXPECT_EQ(too_many.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(too_many.status().message()), AllOf(HasSubstr("8 windows"), HasSubstr("at most 3")));
  EXPECT_EQ(PlanWindows(381, 62, 62, 100).status().code(), absl::StatusCode::kInvalidArgument);  // stride = C.
  EXPECT_EQ(PlanWindows(381, 62, -1, 100).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanWindows(288, 32 - 3 - 45, 0, 100).status().code(), absl::StatusCode::kInvalidArgument);  // C < 1.
}

TEST(LongInputTest, StrideZeroTilesAndShortOrEmptyTextsAreOneWindow) {
  const auto tiles = PlanWindows(10, 4, 0, 100);
  ASSERT_TRUE(tiles.ok());
  ASSERT_EQ(tiles->size(), 3u);
  EXPECT_EQ((*tiles)[2].start, 8);
  EXPECT_EQ((*tiles)[2].end, 10);
  ASSERT_EQ(PlanWindows(4, 4, 3, 1)->size(), 1u);
  const auto empty = PlanWindows(0, 4, 0, 1);
  ASSERT_EQ(empty->size(), 1u);
  EXPECT_EQ((*empty)[0].end, 0);
}

TEST(LongInputTest, EachTokenTakesTheWindowItIsDeepestIn) {
  // Windows [0, 6) and [3, 9): token 3 is at depth 2 in the first, 0 in the
  // second; token 4 at depth 1 in both (the earlier window keeps it);
  // token 5 at depth 0 in the first, 2 in the second.
  const std::vector<int32_t> choice = TokenWindowChoice({{0, 6}, {3, 9}}, 9);
  EXPECT_EQ(choice, (std::vector<int32_t>{0, 0, 0, 0, 0, 1, 1, 1, 1}));
}

}  // namespace
}  // namespace deberta::service
