// The attention's row softmax against at::softmax, with the key mask's
// -1e30 entries and row lengths off the 8-wide vectors, on the AVX2 kernel
// (where the CPU has it) and on the portable one; its bfloat16 output
// against LibTorch's rounding of the same float32 probabilities.
#include "model/torch/row_softmax.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

#include "model/torch/cpu_backend.h"

namespace deberta::model {
namespace {

// Scores as attention has them: spread over tens, a few masked keys.
at::Tensor Scores(int64_t rows, int64_t length) {
  at::Tensor s = at::randn({rows, length}) * 6.0;
  if (length > 2) s.select(1, length - 1).fill_(-1e30);                // A padded key.
  if (length > 3) s.select(1, 1).fill_(-1e30);
  return s;
}

void ExpectSoftmax(int64_t rows, int64_t length) {
  const at::Tensor s = Scores(rows, length);
  const at::Tensor want = at::softmax(s, -1);
  at::Tensor got = s.clone();
  SoftmaxRowsInPlace(got.data_ptr<float>(), rows, length);
  EXPECT_TRUE(at::allclose(got, want, 1e-6, 1e-7))
      << rows << " x " << length << ": largest difference " << (got - want).abs().max().item<float>();
  EXPECT_TRUE(at::equal(got.eq(0), want.eq(0))) << "masked keys must get exactly 0";
  EXPECT_TRUE(at::allclose(got.sum(-1), at::ones({rows}), 1e-5, 1e-6));

  at::Tensor scratch = s.clone();
  at::Tensor bits = at::empty({rows, length}, at::kBFloat16);
  SoftmaxRowsToBFloat16(scratch.data_ptr<float>(), rows, length,
                        reinterpret_cast<uint16_t*>(bits.data_ptr<at::BFloat16>()));
  EXPECT_TRUE(at::equal(bits, got.to(at::kBFloat16))) << rows << " x " << length << ": bfloat16 rounding";
}

TEST(RowSoftmaxTest, MatchesAtSoftmaxAtEveryLength) {
  at::manual_seed(7);
  for (int64_t length : {1, 3, 7, 8, 9, 16, 29, 128, 131}) ExpectSoftmax(5, length);
}

TEST(RowSoftmaxTest, PortableKernelMatchesToo) {
  at::manual_seed(8);
  ScopedCpuKernelMode portable(CpuKernelMode::kPortable);
  for (int64_t length : {1, 7, 8, 29, 128}) ExpectSoftmax(3, length);
}

TEST(RowSoftmaxTest, ExpIsWithinFourUlp) {
  // Rows [0, x, masked x 6]: the second probability is exp(x) / (1 +
  // exp(x)), exp's own error plus a rounding, for x from 0 down to -87.
  constexpr int64_t kRows = 1000, kLength = 8;
  at::Tensor s = at::full({kRows, kLength}, -1e30);
  s.select(1, 0).fill_(0.0);
  const at::Tensor x = at::linspace(0.0, -87.0, kRows, at::kDouble);
  s.select(1, 1).copy_(x);
  const at::Tensor rounded_x = s.select(1, 1).to(at::kDouble);
  SoftmaxRowsInPlace(s.data_ptr<float>(), kRows, kLength);
  const at::Tensor want = rounded_x.exp() / (rounded_x.exp() + 1.0);
  const double worst = (s.select(1, 1).to(at::kDouble) / want - 1.0).abs().max().item<double>();
  EXPECT_LE(worst, 4.8e-7);
}

TEST(RowSoftmaxTest, BFloat16RoundsHalfwayCasesToEven) {
  // About one float32 in 65536 lies halfway between two bfloat16s: a
  // million probabilities hold a few dozen, rounded as LibTorch does.
  at::manual_seed(9);
  const at::Tensor s = at::randn({1024, 1024}) * 3.0;
  at::Tensor probs = s.clone(), scratch = s.clone();
  SoftmaxRowsInPlace(probs.data_ptr<float>(), 1024, 1024);
  at::Tensor bits = at::empty({1024, 1024}, at::kBFloat16);
  SoftmaxRowsToBFloat16(scratch.data_ptr<float>(), 1024, 1024,
                        reinterpret_cast<uint16_t*>(bits.data_ptr<at::BFloat16>()));
  const at::Tensor low_bits = probs.view(at::kInt).bitwise_and(0xffff);
  ASSERT_GT(low_bits.eq(0x8000).sum().item<int64_t>(), 4) << "too few halfway cases to tell";
  EXPECT_TRUE(at::equal(bits, probs.to(at::kBFloat16)));
}

TEST(RowSoftmaxTest, LargeAndEqualScores) {
  // exp of the largest entry is exp(0) = 1 whatever the scale: no overflow.
  at::Tensor s = at::tensor(std::vector<float>{1e4f, 1e4f, -1e4f, 0.0f, 1e4f, 3.0f, 1e4f, 1e4f, 1e4f});
  const at::Tensor want = at::softmax(s, -1);
  SoftmaxRowsInPlace(s.data_ptr<float>(), 1, s.size(0));
  EXPECT_TRUE(at::allclose(s, want, 1e-6, 1e-7)) << s;
}

}  // namespace
}  // namespace deberta::model
