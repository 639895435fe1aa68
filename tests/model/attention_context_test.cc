// The relative geometry of a length (MakeRelativeGeometry): the rows of
// every (query, key) pair, the same rows by distance, and how far they are
// affine in i - j, for v1 spans (clamped beyond) and v3 log buckets.
#include "model/torch/attention_context.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

#include "model/config.h"
#include "model/torch/relative_position.h"

namespace deberta::model {
namespace {

DebertaConfig GeometryConfig(int64_t position_buckets, int64_t max_relative_positions) {
  DebertaConfig config;
  config.relative_attention = true;
  config.max_relative_positions = max_relative_positions;
  config.position_buckets = position_buckets;
  return config;
}

std::vector<int64_t> IndexValues(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

TEST(AttentionContextTest, RowsAreQueryMinusKeyWithinTheSpan) {
  // S = 4, no buckets, length 3: row(i, j) = i - j + 4, rows 2..6 used.
  const RelativeGeometry g = MakeRelativeGeometry(GeometryConfig(-1, 4), 3, at::kCPU);
  EXPECT_EQ(g.first_row, 2);
  EXPECT_EQ(g.num_rows, 5);
  EXPECT_EQ(IndexValues(g.c2p_index), (std::vector<int64_t>{2, 1, 0, 3, 2, 1, 4, 3, 2}));
  EXPECT_EQ(IndexValues(g.p2c_index), IndexValues(g.c2p_index.t()));
  EXPECT_EQ(g.row_by_distance, (std::vector<int32_t>{4, 3, 2, 1, 0}));  // j - i = -2 .. 2
  EXPECT_EQ(g.affine_offset, 2);
  EXPECT_GE(g.affine_reach, 3);
}

TEST(AttentionContextTest, ClampedRowsEndTheAffineReach) {
  // S = 4, length 6: distances +-4 and +-5 clamp to rows 0 and 7, so only
  // |i - j| < 4 keeps to i - j + 4.
  const RelativeGeometry g = MakeRelativeGeometry(GeometryConfig(-1, 4), 6, at::kCPU);
  EXPECT_EQ(g.first_row, 0);
  EXPECT_EQ(g.affine_offset, 4);
  EXPECT_EQ(g.affine_reach, 4);
}

TEST(AttentionContextTest, LogBucketsAreAffineAsFarAsTheBucketsAreLinear) {
  const int64_t length = 512;
  const DebertaConfig config = GeometryConfig(256, 512);  // deberta-v3
  const RelativeGeometry g = MakeRelativeGeometry(config, length, at::kCPU);
  ASSERT_EQ(static_cast<int64_t>(g.row_by_distance.size()), 2 * length - 1);
  const std::vector<int64_t> index = IndexValues(g.c2p_index);
  for (int64_t i = 0; i < length; ++i) {
    for (int64_t j = 0; j < length; ++j) {
      ASSERT_EQ(index[i * length + j], g.row_by_distance[j - i + length - 1]) << i << ", " << j;
      ASSERT_EQ(index[i * length + j] + g.first_row, RelativeTableRow(i - j, 256, 256, 512)) << i << ", " << j;
    }
  }
  // The buckets are the distance up to 128 and a little beyond (129 -> 129,
  // 140 -> 137): the reach ends at the first distance that is not.
  int64_t linear = 1;
  while (BucketRelativePosition(linear, 256, 512) == linear) ++linear;
  EXPECT_GT(linear, 128);
  EXPECT_LT(linear, 140);
  EXPECT_EQ(g.affine_reach, linear);
  EXPECT_EQ(g.affine_offset, 256 - g.first_row);
}

TEST(AttentionContextTest, FirstQueryContextHasNoRowsByDistance) {
  at::Tensor mask = at::ones({2, 10});
  const AttentionContext first = FirstQueryContext(MakeAttentionContext(GeometryConfig(8, 16), mask));
  EXPECT_EQ(first.relative.c2p_index.sizes(), (at::IntArrayRef{1, 10}));
  EXPECT_EQ(first.relative.p2c_index.sizes(), (at::IntArrayRef{10, 1}));
  EXPECT_TRUE(first.relative.row_by_distance.empty());
}

}  // namespace
}  // namespace deberta::model
