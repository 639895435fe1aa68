// oneDNN's sgemm for float32 linear layers against at::linear: every shape
// the engine gives it (one row, a few, many; 2-D and 3-D inputs; with and
// without bias; row ranges of a fused weight), within float32 rounding.
#include "model/torch/cpu_sgemm.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <tuple>

namespace deberta::model {
namespace {

TEST(CpuSgemmTest, MatchesAtLinearOnEveryShapeTheEngineUses) {
  if (!CpuSgemmEnabled()) GTEST_SKIP() << "built without oneDNN's sgemm (no libdnnl-dev)";
  at::manual_seed(1);
  for (auto [rows, in, out] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 128}, {3, 64, 1024},
                               {130, 768, 3072}, {7, 3072, 768}, {2, 32, 5}}) {
    const at::Tensor x = at::randn({rows, in}), w = at::randn({out, in}), b = at::randn({out});
    for (const at::Tensor& bias : {b, at::Tensor()}) {
      const at::Tensor want = at::linear(x, w, bias), got = CpuSgemmLinear(x, w, bias);
      ASSERT_EQ(got.sizes(), want.sizes());
      EXPECT_LT((got - want).abs().max().item<float>(), 1e-4 * std::sqrt(static_cast<double>(in)))
          << rows << "x" << in << " -> " << out << (bias.defined() ? " with bias" : "");
    }
  }
}

TEST(CpuSgemmTest, TheBiasIsNeverWrittenToEvenForOneRow) {
  if (!CpuSgemmEnabled()) GTEST_SKIP() << "built without oneDNN's sgemm (no libdnnl-dev)";
  const at::Tensor x = at::randn({1, 16}), w = at::randn({8, 16}), b = at::randn({8});
  const at::Tensor b_before = b.clone();
  const at::Tensor first = CpuSgemmLinear(x, w, b), second = CpuSgemmLinear(x, w, b);
  EXPECT_TRUE(at::equal(b, b_before));
  EXPECT_TRUE(at::equal(first, second));
}

TEST(CpuSgemmTest, ThreeDimensionalInputsAndRowRangesOfAFusedWeight) {
  if (!CpuSgemmEnabled()) GTEST_SKIP() << "built without oneDNN's sgemm (no libdnnl-dev)";
  at::manual_seed(2);
  const at::Tensor x = at::randn({2, 9, 48}), w = at::randn({3 * 40, 48}), b = at::randn({3 * 40});
  // The fused q/k/v weight's k/v rows, as the attention takes them.
  const at::Tensor w_kv = w.narrow(0, 40, 80), b_kv = b.narrow(0, 40, 80);
  ASSERT_TRUE(CpuSgemmApplies(x, w_kv));
  const at::Tensor got = CpuSgemmLinear(x, w_kv, b_kv), want = at::linear(x, w_kv, b_kv);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_LT((got - want).abs().max().item<float>(), 1e-3);
  // A non-contiguous input (a transposed view) is copied, not misread.
  const at::Tensor xt = at::randn({48, 5}).t();
  EXPECT_LT((CpuSgemmLinear(xt, w, b) - at::linear(xt, w, b)).abs().max().item<float>(), 1e-3);
}

TEST(CpuSgemmTest, OnlyFloat32CpuOperandsWithUnitColumnStrideApply) {
  if (!CpuSgemmEnabled()) GTEST_SKIP() << "built without oneDNN's sgemm (no libdnnl-dev)";
  const at::Tensor x = at::randn({4, 8}), w = at::randn({6, 8});
  EXPECT_TRUE(CpuSgemmApplies(x, w));
  EXPECT_FALSE(CpuSgemmApplies(x.to(at::kBFloat16), w.to(at::kBFloat16)));
  EXPECT_FALSE(CpuSgemmApplies(x, at::randn({8, 6}).t()));  // Column stride 6.
  EXPECT_FALSE(CpuSgemmApplies(x, at::randn({6, 7})));      // Inner sizes differ.
  SetCpuSgemmEnabled(false);
  EXPECT_FALSE(CpuSgemmApplies(x, w));
  SetCpuSgemmEnabled(true);
}

}  // namespace
}  // namespace deberta::model
