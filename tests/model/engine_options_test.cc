// EngineOptions' text forms: warm-up shapes parsed and printed, bad ones
// refused with the item named; an engine warming up shapes longer than its
// limit (clamped, not an error); buckets chosen, checked and stopped.
#include "model/engine_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/engine_factory.h"
#include "model/torch/torch_engine.h"

namespace deberta::model {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(EngineOptionsTest, ShapesParseInOrderAndPrintBack) {
  auto shapes = ParseShapes("16x128,1x64,32x8");
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_THAT(*shapes, ElementsAre(BatchShape{16, 128}, BatchShape{1, 64}, BatchShape{32, 8}));
  EXPECT_EQ(FormatShapes(*shapes), "16x128,1x64,32x8");
  auto none = ParseShapes("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(EngineOptionsTest, BadShapesAreRefusedNamingTheItem) {
  for (const char* text : {"16", "16x", "x128", "0x128", "16x0", "16x128,", "16x128x2", "ax8", "-1x8"}) {
    auto shapes = ParseShapes(text);
    EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
  EXPECT_THAT(std::string(ParseShapes("8x64,0x128").status().message()), HasSubstr("'0x128'"));
}

TEST(EngineOptionsTest, WarmUpShapesRunBeforeServingAndLongOnesAreClampedToTheLimit) {
  EngineOptions options;  // The demo model: classifier and MLM head.
  options.num_threads = 1;
  options.max_sequence_length = 64;
  options.warmup_shapes = {{2, 16}, {3, 1000}};
  auto engine = CreateTorchEngine(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_TRUE((*engine)->InitializeThread().ok());
  Sequence sequence;
  sequence.token_ids.assign(64, 5);
  auto out = (*engine)->Classify({sequence});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->size(), 1u);
}

TEST(EngineOptionsTest, TheLargestBatchIsTheTokenBudgetInSequencesOfTheLongestLength) {
  EngineOptions options;
  options.warmup_shapes = {{2, 16}};
  options.warmup_batch_tokens = 8192;
  options.warmup_max_batch_size = 32;
  // 16 sequences of 512 tokens: the budget, and the largest attention.
  EXPECT_THAT(TorchEngine::WarmupShapes(options, 512), ElementsAre(BatchShape{2, 16}, BatchShape{16, 512}));
  // Short sequences: as many as the batch size allows.
  EXPECT_THAT(TorchEngine::WarmupShapes(options, 64), ElementsAre(BatchShape{2, 16}, BatchShape{32, 64}));
  // A budget under one sequence of the longest length: one sequence, the budget long.
  options.warmup_batch_tokens = 100;
  EXPECT_THAT(TorchEngine::WarmupShapes(options, 512), ElementsAre(BatchShape{2, 16}, BatchShape{1, 100}));
  options.warmup_batch_tokens = 0;
  EXPECT_THAT(TorchEngine::WarmupShapes(options, 512), ElementsAre(BatchShape{2, 16}));
}

TEST(EngineOptionsTest, ABatchGoesToTheSmallestBucketThatHoldsIt) {
  const std::vector<BatchShape> buckets{{8, 128}, {1, 128}, {32, 64}, {4, 256}, {16, 64}};
  EXPECT_EQ(SmallestBucket(buckets, {1, 100}), (BatchShape{1, 128}));
  EXPECT_EQ(SmallestBucket(buckets, {2, 100}), (BatchShape{8, 128}));
  EXPECT_EQ(SmallestBucket(buckets, {9, 10}), (BatchShape{16, 64}));
  EXPECT_EQ(SmallestBucket(buckets, {3, 129}), (BatchShape{4, 256}));
  EXPECT_EQ(SmallestBucket(buckets, {32, 64}), (BatchShape{32, 64}));  // Exactly a bucket.
  // 8x128 and 16x64 hold 1024 tokens each: the shorter wins.
  EXPECT_EQ(SmallestBucket(buckets, {8, 64}), (BatchShape{16, 64}));
  EXPECT_EQ(SmallestBucket(buckets, {33, 8}), std::nullopt);
  EXPECT_EQ(SmallestBucket(buckets, {1, 257}), std::nullopt);
  EXPECT_EQ(SmallestBucket({}, {1, 1}), std::nullopt);
}

TEST(EngineOptionsTest, BadBucketsAreRefusedAtCreation) {
  EngineOptions options;  // The demo model.
  options.max_sequence_length = 64;
  options.buckets = {{2, 65}};
  auto engine = CreateTorchEngine(options);
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(engine.status().message()), HasSubstr("2x65"));
  options.buckets = {};
  options.device_graphs = true;
  engine = CreateTorchEngine(options);
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(engine.status().message()), HasSubstr("--buckets"));
}

// Padding rows are never wanted: with every caller gone before the first
// layer the padded batch stops, eagerly and from a recorded graph.
TEST(EngineOptionsTest, APaddedBatchStopsWhenItsCallersHaveGone) {
  for (bool graphs : {false, true}) {
    EngineOptions options;
    options.num_threads = 1;
    options.buckets = {{4, 32}};
    options.device_graphs = graphs;
    auto engine = CreateTorchEngine(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    ASSERT_TRUE((*engine)->InitializeThread().ok());
    Sequence sequence;
    sequence.token_ids.assign(10, 5);
    auto out = (*engine)->Classify({sequence, sequence}, [] { return std::vector<bool>{false, false}; });
    EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled) << "graphs " << graphs;
    out = (*engine)->Classify({sequence, sequence}, [] { return std::vector<bool>{false, true}; });
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE((*out)[0].logits.empty() || graphs);  // A graph computes every row; none is dropped inside.
    EXPECT_FALSE((*out)[1].logits.empty());
  }
}

}  // namespace
}  // namespace deberta::model
