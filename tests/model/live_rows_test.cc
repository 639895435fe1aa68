// LiveRows: which rows a forward keeps as callers go, what it drops from
// the key padding and the per-row states, and the status (not an
// exception) that stops a forward with no row left.
#include "model/torch/live_rows.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace deberta::model {
namespace {

using ::testing::ElementsAre;

KeyPadding PaddingOf(int64_t rows, int64_t length) {
  at::Tensor mask = at::ones({rows, length});
  for (int64_t r = 0; r < rows; ++r) mask[r].narrow(0, 0, r).fill_(0);  // Row r: its first r keys padding.
  return MakeKeyPadding(mask);
}

TEST(LiveRowsTest, WithoutAQuestionEveryRowStays) {
  LiveRows live(3, nullptr);
  KeyPadding padding = PaddingOf(3, 4);
  at::Tensor state = at::arange(3);
  ASSERT_TRUE(live.DropUnwanted(&padding, {&state}).ok());
  EXPECT_THAT(live.rows(), ElementsAre(0, 1, 2));
  EXPECT_EQ(state.size(0), 3);
  EXPECT_TRUE(live.CheckAnyWanted().ok());
}

TEST(LiveRowsTest, DropsTheRowsNoLongerWantedFromEveryPerRowTensor) {
  std::vector<bool> wanted{true, false, true, true};
  const Engine::RowsWanted ask = [&wanted] { return wanted; };
  LiveRows live(5, &ask);  // Row 4 pads the batch: never wanted once asked.
  KeyPadding padding = PaddingOf(5, 6);
  at::Tensor state = at::arange(5) * 10, undefined;
  ASSERT_TRUE(live.DropUnwanted(&padding, {&state, &undefined}).ok());
  EXPECT_THAT(live.rows(), ElementsAre(0, 2, 3));
  EXPECT_TRUE(at::equal(state, at::tensor({0, 20, 30}, at::kLong)));
  EXPECT_FALSE(undefined.defined());
  ASSERT_EQ(padding.mask.size(0), 3);
  // Row 2 of the input, now at index 1, kept its own mask and bias.
  EXPECT_EQ(padding.mask[1].sum().item<float>(), 4);
  EXPECT_EQ(padding.key_bias.size(0), 3);
  EXPECT_LT(padding.key_bias[1][0][0][1].item<float>(), -1e29);

  wanted[0] = false;  // Later, input row 0's caller goes too.
  ASSERT_TRUE(live.DropUnwanted(&padding, {&state}).ok());
  EXPECT_THAT(live.rows(), ElementsAre(2, 3));
  EXPECT_TRUE(at::equal(state, at::tensor({20, 30}, at::kLong)));
}

TEST(LiveRowsTest, NoRowLeftStopsWithCancelled) {
  const Engine::RowsWanted none = [] { return std::vector<bool>{false, false}; };
  LiveRows live(2, &none);
  KeyPadding padding = PaddingOf(2, 3);
  at::Tensor state = at::arange(2);
  const absl::Status stopped = live.DropUnwanted(&padding, {&state});
  EXPECT_EQ(stopped.code(), absl::StatusCode::kCancelled) << stopped;
  EXPECT_EQ(live.CheckAnyWanted().code(), absl::StatusCode::kCancelled);
}

TEST(LiveRowsTest, KeepBelowKeepsTheCallersRowsOfAPaddedBatch) {
  LiveRows live(6, nullptr);
  EXPECT_EQ(live.KeepBelow(4), 4);
  EXPECT_THAT(live.rows(), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(live.KeepBelow(10), 4);
}

}  // namespace
}  // namespace deberta::model
