// PackedLinear and the oneDNN Int8Linear against LibTorch's own products:
// shapes of every layer kind the model packs (the fused q/k/v, the FFN, a
// classifier of three labels, one row or many), with and without bias and
// fused GELU, in float32 and bfloat16.
#include "model/torch/cpu_backend.h"
#include "model/torch/packed_linear.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <tuple>

#include "model/torch/int8_linear.h"

namespace deberta::model {
namespace {

struct Shape {
  int64_t rows, in, out;
};

// Rows of x [2, rows, in]: padded to the row grid (row_grid.h), on its fine (7, 33) and coarse (600) grains;
// (2100) in two chunks.
const Shape kShapes[] = {{128, 64, 192}, {7, 64, 3}, {1, 96, 64}, {33, 256, 48}, {600, 32, 64}, {2100, 16, 64}};

// Whether the CPU backend packs this dtype on this host (oneDNN has a
// blocked kernel for it); where it does not, nothing is packed, and that
// is checked instead.
bool Packs(at::ScalarType dtype) { return CpuKernels().PacksLinear(dtype); }

TEST(PackedLinearTest, MatchesLibTorchsLinear) {
  at::manual_seed(7);
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    for (const Shape& s : kShapes) {
      for (bool with_bias : {true, false}) {
        for (bool gelu : {false, true}) {
          SCOPED_TRACE(::testing::Message() << c10::toString(dtype) << " " << s.rows << "x" << s.in << "->" << s.out
                                          << (with_bias ? " bias" : "") << (gelu ? " gelu" : ""));
          const at::Tensor w = at::randn({s.out, s.in}).to(dtype), x = at::randn({2, s.rows, s.in});
          const at::Tensor b = with_bias ? at::randn({s.out}).to(dtype) : at::Tensor();
          PackedLinear packed = PackedLinear::Pack(w, b, gelu);
          // The model's wide layers always pack where the kernels are; a
          // narrow one may be refused by Pack's own check (oneDNN 3.7,
          // float32, outputs not a multiple of 64), never packed wrong.
          if (s.out % 64 == 0) {
            ASSERT_EQ(packed.defined(), Packs(dtype));
          }
          if (!Packs(dtype)) {
            ASSERT_FALSE(packed.defined());
          }
          if (!packed.defined()) continue;
          EXPECT_EQ(packed.applies_gelu(), gelu);
          at::Tensor want = at::linear(x.to(dtype).to(at::kFloat), w.to(at::kFloat),
                                       with_bias ? b.to(at::kFloat) : at::Tensor());
          if (gelu) want = at::gelu(want);
          const at::Tensor got = packed.Forward(x, at::kFloat);
          ASSERT_EQ(got.sizes(), want.sizes());
          const double tolerance = dtype == at::kFloat ? 1e-4 : 1e-2;
          EXPECT_TRUE(at::allclose(got, want, tolerance, tolerance))
              << "largest difference " << (got - want).abs().max().item<float>();
          if (dtype == at::kBFloat16) {
            EXPECT_TRUE(at::allclose(packed.Forward(x, at::kBFloat16).to(at::kFloat), want, 2e-2, 2e-2));
          }
        }
      }
    }
  }
}

TEST(PackedLinearTest, KeepsItsOwnCopyOfTheBias) {
  if (!Packs(at::kFloat)) GTEST_SKIP() << "no blocked float32 kernels here";
  at::Tensor w = at::randn({64, 8}), b = at::randn({64}), x = at::randn({4, 8});
  const at::Tensor want = at::linear(x, w, b);
  PackedLinear packed = PackedLinear::Pack(w, b);
  ASSERT_TRUE(packed.defined());
  b.set_data(at::empty({0}));  // As DenseImpl::Release does to its parameters.
  w.set_data(at::empty({0}));
  EXPECT_TRUE(at::allclose(packed.Forward(x, at::kFloat), want, 1e-4, 1e-4));
}

// The int8 product against float32 on the same weights: within the
// quantization error (8 bits for weights and activations), in every int8
// kernel the backend has on this host: oneDNN's (VNNI), the float32
// product on int8 weights (kNoVnni: any CPU), LibTorch's engine.
TEST(Int8LinearTest, MatchesFloat32WithinQuantizationError) {
  if (!RequireOnednnQuantizedEngine().ok()) GTEST_SKIP() << "no int8 engine in this LibTorch";
  for (CpuKernelMode mode : {CpuKernelMode::kAuto, CpuKernelMode::kNoVnni, CpuKernelMode::kLibTorch}) {
    ScopedCpuKernelMode forced(mode);
    at::manual_seed(8);
    for (const Shape& s : kShapes) {
      for (bool gelu : {false, true}) {
        SCOPED_TRACE(::testing::Message() << CpuKernelModeName(mode) << " " << s.rows << "x" << s.in << "->" << s.out
                                        << (gelu ? " gelu" : ""));
        const at::Tensor w = at::randn({s.out, s.in}) * 0.05, b = at::randn({s.out}), x = at::randn({s.rows, s.in});
        Int8Linear linear = Int8Linear::Pack(w, b, gelu);
        at::Tensor want = at::linear(x, w, b);
        at::Tensor got = linear.forward(x);
        if (gelu && !linear.applies_gelu()) got = at::gelu(got);  // GELU not fused.
        if (gelu) want = at::gelu(want);
        ASSERT_EQ(got.sizes(), want.sizes());
        // Per product: |x| <= ~4, |w| <= ~0.2: a few percent of the output's scale.
        const double scale = want.abs().max().item<double>();
        EXPECT_LT((got - want).abs().max().item<double>(), 0.03 * scale + 0.02);
      }
    }
  }
}

}  // namespace
}  // namespace deberta::model
