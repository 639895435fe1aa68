// The int8 linear layer of CPUs without VNNI (int8_no_vnni.h) against the
// exact product of its quantized operands, computed in float64: on the
// split path (up to kNoVnniSplitMaxRows rows: activations per row on
// [-127, 127]) and on the widened path (more rows: float32 activations),
// with and without bias and GELU, and at the extremes where a 16-bit pair
// sum of 8-bit activations would saturate.
#include "model/torch/int8_no_vnni.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>

namespace deberta::model {
namespace {

// Symmetric int8 as the layer quantizes: per row of `t` [rows, cols], its
// largest magnitude over 127 (1 for a row of zeros), values rounded.
at::Tensor FakeQuantizedRows(const at::Tensor& t) {
  at::Tensor scale = std::get<0>(t.abs().max(/*dim=*/1, /*keepdim=*/true)).div(127.0);
  scale = at::where(scale > 0, scale, at::ones_like(scale));
  return at::round(t / scale).clamp(-127, 127).mul(scale);
}

// The layer packed from float32 w [out, in] as Int8Linear::Pack does it:
// each output channel's weights rounded on max |w| / 127.
std::shared_ptr<const NoVnniInt8Weights> PackAsInt8LinearDoes(const at::Tensor& w, const at::Tensor& b, bool gelu) {
  const at::Tensor scales = std::get<0>(w.abs().max(/*dim=*/1)).div(127.0).clamp_min(1e-12);
  const at::Tensor quantized = at::round(w / scales.unsqueeze(1)).clamp(-127, 127).to(at::kChar);
  return PackNoVnniInt8(quantized, scales, b, gelu);
}

// What the layer must compute for x [rows, in]: the int8 weights (scales
// per output channel: FakeQuantizedRows of w [out, in]) times x, quantized
// per row where `quantized_activations`, plus the bias, then GELU.
at::Tensor Expected(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, bool gelu,
                    bool quantized_activations) {
  const at::Tensor xd = (quantized_activations ? FakeQuantizedRows(x) : x).to(at::kDouble);
  at::Tensor y = at::linear(xd, FakeQuantizedRows(w).to(at::kDouble), b.defined() ? b.to(at::kDouble) : at::Tensor());
  if (gelu) y = at::gelu(y);
  return y.to(at::kFloat);
}

TEST(Int8NoVnniTest, MatchesTheExactProductOfItsQuantizedOperands) {
  at::manual_seed(11);
  struct Shape {
    int64_t rows, in, out;
  };
  for (const Shape& s : {Shape{1, 96, 64}, Shape{7, 256, 48}, Shape{kNoVnniSplitMaxRows, 64, 192},
                         Shape{kNoVnniSplitMaxRows + 1, 64, 192}, Shape{600, 32, 64}}) {
    for (bool with_bias : {true, false}) {
      for (bool gelu : {false, true}) {
        SCOPED_TRACE(::testing::Message() << s.rows << "x" << s.in << "->" << s.out << (with_bias ? " bias" : "")
                                          << (gelu ? " gelu" : ""));
        const at::Tensor w = at::randn({s.out, s.in}), x = at::randn({s.rows, s.in}) * 3;
        const at::Tensor b = with_bias ? at::randn({s.out}) : at::Tensor();
        const auto packed = PackAsInt8LinearDoes(w, b, gelu);
        ASSERT_NE(packed, nullptr);
        const at::Tensor got = NoVnniInt8Forward(*packed, x, at::kFloat);
        const at::Tensor want = Expected(x, w, b, gelu, /*quantized_activations=*/s.rows <= kNoVnniSplitMaxRows);
        ASSERT_EQ(got.sizes(), want.sizes());
        EXPECT_TRUE(at::allclose(got, want, 1e-4, 1e-4)) << "largest difference " << (got - want).abs().max().item<float>();
        // Not what float32 activations give: the split path quantizes them.
        if (s.rows <= kNoVnniSplitMaxRows) {
          const at::Tensor unquantized = Expected(x, w, b, gelu, false);
          EXPECT_GT((got - unquantized).abs().max().item<float>(), 1e-3);
        }
        const at::Tensor in_bf16 = NoVnniInt8Forward(*packed, x, at::kBFloat16);
        EXPECT_EQ(in_bf16.scalar_type(), at::kBFloat16);
        EXPECT_TRUE(at::allclose(in_bf16.to(at::kFloat), got, 1e-2, 1e-2));
      }
    }
  }
}

// Every weight at +-127 and every activation at its row's largest
// magnitude: the sums of 8-bit activations' pairs (2 x 255 x 127) would
// saturate 16 bits; the split parts' (2 x 127 x 127) do not.
TEST(Int8NoVnniTest, NoSumSaturatesAtTheExtremes) {
  const int64_t in = 256, out = 16;
  const at::Tensor w = at::where(at::rand({out, in}) > 0.5, at::ones({out, in}), -at::ones({out, in}));
  for (const double sign : {1.0, -1.0}) {
    // Rows of +-5 agreeing with channel 0's signs (and -w's), and a row of one sign.
    const at::Tensor x = at::cat({w.narrow(0, 0, 1) * 5 * sign, at::full({1, in}, 5 * sign)});
    const auto packed = PackAsInt8LinearDoes(w, at::Tensor(), false);
    ASSERT_NE(packed, nullptr);
    const at::Tensor got = NoVnniInt8Forward(*packed, x, at::kFloat);
    const at::Tensor want = at::linear(x, w);
    EXPECT_NEAR(got[0][0].item<float>(), 5 * in * sign, 1e-3);
    EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-3)) << "largest difference " << (got - want).abs().max().item<float>();
  }
}

TEST(Int8NoVnniTest, AnswersZeroRowsAndRowsOfZeros) {
  const at::Tensor w = at::randn({32, 64}), b = at::randn({32});
  const auto packed = PackAsInt8LinearDoes(w, b, false);
  ASSERT_NE(packed, nullptr);
  EXPECT_EQ(NoVnniInt8Forward(*packed, at::zeros({0, 64}), at::kFloat).size(0), 0);
  const at::Tensor got = NoVnniInt8Forward(*packed, at::zeros({3, 64}), at::kFloat);
  EXPECT_TRUE(at::allclose(got, b.expand({3, 32}), 1e-6, 1e-6));
}

}  // namespace
}  // namespace deberta::model
