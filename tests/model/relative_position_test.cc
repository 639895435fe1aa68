// Hand-computed relative-position buckets (docs/deberta-model.md section 4.2 examples) and rows.
#include "model/torch/relative_position.h"

#include <gtest/gtest.h>

namespace deberta::model {
namespace {

TEST(RelativePositionTest, NoBucketsKeepsDistance) {
  EXPECT_EQ(BucketRelativePosition(-700, -1, 512), -700);
  EXPECT_EQ(BucketRelativePosition(5, 0, 512), 5);
}

TEST(RelativePositionTest, BucketsOfReleasedModels) {
  // K = 256, M = 512 (deberta-v3): the spec's worked examples.
  const std::pair<int64_t, int64_t> cases[] = {{128, 128}, {129, 129}, {140, 137}, {160, 149},
                                               {200, 169}, {256, 192}, {300, 207}, {400, 233},
                                               {500, 254}, {510, 255}, {511, 255}, {600, 255}};
  for (auto [r, bucket] : cases) {
    EXPECT_EQ(BucketRelativePosition(r, 256, 512), bucket) << r;
    EXPECT_EQ(BucketRelativePosition(-r, 256, 512), -bucket) << -r;
  }
}

TEST(RelativePositionTest, SmallBucketsClampBeforeBucketing) {
  const std::pair<int64_t, int64_t> cases[] = {{8, 8},   {9, 9},   {10, 10}, {12, 11}, {16, 12},
                                               {20, 13}, {24, 14}, {28, 15}, {31, 15}, {39, 15}};
  for (auto [r, bucket] : cases) {
    EXPECT_EQ(BucketRelativePosition(r, 16, 32), bucket) << r;
    EXPECT_EQ(BucketRelativePosition(-r, 16, 32), -bucket) << -r;
  }
  // The reference clamps |r| to M-1 first: -40 -> -15 -> row 1, where the
  // unclamped (Hugging Face) formula would reach row 0.
  EXPECT_EQ(RelativeTableRow(-40, 16, 16, 32), 1);
}

TEST(RelativePositionTest, RowsBeyondTheSpanClampToTheTableEnds) {
  // S = 4, no buckets: row = clamp(i - j + 4, 0, 7).
  EXPECT_EQ(RelativeTableRow(2, 4, -1, 4), 6);
  EXPECT_EQ(RelativeTableRow(-9, 4, -1, 4), 0);
  EXPECT_EQ(RelativeTableRow(9, 4, -1, 4), 7);
}

}  // namespace
}  // namespace deberta::model
