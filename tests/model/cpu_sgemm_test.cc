// oneDNN's sgemm for float32 linear layers against at::linear: every shape
// the engine gives it (one row, a few, many; 2-D and 3-D inputs; with and
// without bias; row ranges of a fused weight), within float32 rounding; and
// the attention's batched products against at::matmul, on the strided and
// broadcast views the attention passes.
#include "model/torch/cpu_backend.h"
#include "model/torch/cpu_sgemm.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace deberta::model {
namespace {

TEST(CpuSgemmTest, MatchesAtLinearOnEveryShapeTheEngineUses) {
  if (!CpuKernels().sgemm_products) GTEST_SKIP() << "the CPU backend has no oneDNN sgemm (no libdnnl-dev)";
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
  if (!CpuKernels().sgemm_products) GTEST_SKIP() << "the CPU backend has no oneDNN sgemm (no libdnnl-dev)";
  const at::Tensor x = at::randn({1, 16}), w = at::randn({8, 16}), b = at::randn({8});
  const at::Tensor b_before = b.clone();
  const at::Tensor first = CpuSgemmLinear(x, w, b), second = CpuSgemmLinear(x, w, b);
  EXPECT_TRUE(at::equal(b, b_before));
  EXPECT_TRUE(at::equal(first, second));
}

TEST(CpuSgemmTest, ThreeDimensionalInputsAndRowRangesOfAFusedWeight) {
  if (!CpuKernels().sgemm_products) GTEST_SKIP() << "the CPU backend has no oneDNN sgemm (no libdnnl-dev)";
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
  if (!CpuKernels().sgemm_products) GTEST_SKIP() << "the CPU backend has no oneDNN sgemm (no libdnnl-dev)";
  const at::Tensor x = at::randn({4, 8}), w = at::randn({6, 8});
  EXPECT_TRUE(CpuSgemmApplies(x, w));
  EXPECT_FALSE(CpuSgemmApplies(x.to(at::kBFloat16), w.to(at::kBFloat16)));
  EXPECT_FALSE(CpuSgemmApplies(x, at::randn({8, 6}).t()));  // Column stride 6.
  EXPECT_FALSE(CpuSgemmApplies(x, at::randn({6, 7})));      // Inner sizes differ.
  ScopedCpuKernelMode libtorch(CpuKernelMode::kLibTorch);
  EXPECT_FALSE(CpuSgemmApplies(x, w));
}

TEST(CpuSgemmTest, BatchedProductsMatchMatmulOnTheAttentionsViews) {
  if (!CpuKernels().sgemm_products) GTEST_SKIP() << "the CPU backend has no oneDNN sgemm (no libdnnl-dev)";
  at::manual_seed(3);
  for (auto [batch, len, rows] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 2}, {3, 7, 14}, {2, 33, 64}}) {
    const int64_t heads = 4, head = 16;
    // q, k, v as the fused projection gives them: [B, n, L, d] views of
    // [B, L, 3, n, d] (row stride 3 n d).
    const at::Tensor qkv = at::randn({batch, len, 3, heads, head}).permute({2, 0, 3, 1, 4});
    const at::Tensor q = qkv[0], k = qkv[1], v = qkv[2];
    const std::string shape = std::to_string(batch) + "x" + std::to_string(len);
    ASSERT_TRUE(CpuSgemmProductApplies(q, k));
    const at::Tensor scores = CpuSgemmProduct(q, k, /*transpose_b=*/true);
    ASSERT_EQ(scores.sizes(), (std::vector<int64_t>{batch, heads, len, len})) << shape;
    EXPECT_TRUE(scores.is_contiguous());
    EXPECT_LT((scores - at::matmul(q, k.transpose(-1, -2))).abs().max().item<float>(), 1e-4) << shape;
    // Position rows [n, R, d], a row range of the table, broadcast over the batch.
    const at::Tensor table = at::randn({heads, rows + 5, head}).narrow(1, 2, rows).unsqueeze(0);
    const at::Tensor c2p = CpuSgemmProduct(q, table, /*transpose_b=*/true);
    ASSERT_EQ(c2p.sizes(), (std::vector<int64_t>{batch, heads, len, rows})) << shape;
    EXPECT_LT((c2p - at::matmul(q, table.transpose(-1, -2))).abs().max().item<float>(), 1e-4) << shape;
    // Probabilities times v (b not transposed).
    const at::Tensor probs = at::softmax(scores, -1);
    const at::Tensor context = CpuSgemmProduct(probs, v, /*transpose_b=*/false);
    ASSERT_EQ(context.sizes(), (std::vector<int64_t>{batch, heads, len, head})) << shape;
    EXPECT_LT((context - at::matmul(probs, v)).abs().max().item<float>(), 1e-5) << shape;
  }
}

TEST(CpuSgemmTest, BatchedProductsOfEmptyShapes) {
  if (!CpuKernels().sgemm_products) GTEST_SKIP() << "the CPU backend has no oneDNN sgemm (no libdnnl-dev)";
  EXPECT_EQ(CpuSgemmProduct(at::randn({0, 2, 3, 4}), at::randn({0, 2, 5, 4}), true).sizes(),
            (std::vector<int64_t>{0, 2, 3, 5}));
  // No inner dimension: a zero product, not uninitialized memory.
  const at::Tensor zero = CpuSgemmProduct(at::randn({1, 2, 3, 0}), at::randn({1, 2, 0, 5}), false);
  EXPECT_TRUE(at::equal(zero, at::zeros({1, 2, 3, 5})));
}

TEST(CpuSgemmTest, BatchedProductsOnlyForFloat32RowMajorOperands) {
  if (!CpuKernels().sgemm_products) GTEST_SKIP() << "the CPU backend has no oneDNN sgemm (no libdnnl-dev)";
  const at::Tensor a = at::randn({2, 3, 4}), b = at::randn({2, 5, 4});
  EXPECT_TRUE(CpuSgemmProductApplies(a, b));
  EXPECT_FALSE(CpuSgemmProductApplies(a.to(at::kBFloat16), b.to(at::kBFloat16)));
  EXPECT_FALSE(CpuSgemmProductApplies(a.transpose(-1, -2), b));  // Column stride 4.
  EXPECT_FALSE(CpuSgemmProductApplies(a, b[0]));                 // Dimensions differ.
  EXPECT_FALSE(CpuSgemmProductApplies(a, at::randn({2, 1, 4}).expand({2, 5, 4})));  // Rows overlap.
  ScopedCpuKernelMode libtorch(CpuKernelMode::kLibTorch);
  EXPECT_FALSE(CpuSgemmProductApplies(a, b));
}

}  // namespace
}  // namespace deberta::model
