// CpuAttention against the same attention written op by op in LibTorch
// (the path GPUs take): random operands shaped as the model has them (q, k
// and v strided views of one fused projection, a padded batch, v1 and v3
// position tables), float32 tolerance; bfloat16 within its rounding.
#include "model/torch/cpu_attention.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "model/config.h"
#include "model/torch/cpu_backend.h"
#include "model/torch/cpu_sgemm.h"

namespace deberta::model {
namespace {

struct Operands {
  CpuAttentionInputs in;
  AttentionContext ctx;
};

// B sequences of `lengths` padded to the longest; n heads of d.
Operands MakeOperands(const DebertaConfig& config, const std::vector<int64_t>& lengths, int64_t heads, int64_t d,
                      bool c2p, bool p2c) {
  const int64_t batch = static_cast<int64_t>(lengths.size());
  int64_t length = 0;
  for (int64_t l : lengths) length = std::max(length, l);
  at::Tensor mask = at::zeros({batch, length});
  for (int64_t b = 0; b < batch; ++b) mask[b].narrow(0, 0, lengths[b]).fill_(1);
  Operands o;
  o.ctx = MakeAttentionContext(config, mask);
  // As the fused projection's output: [B, L, 3, n, d] -> three [B, n, L, d] views.
  at::Tensor qkv = at::randn({batch, length, 3, heads, d}).permute({2, 0, 3, 1, 4});
  o.in.q = qkv[0];
  o.in.k = qkv[1];
  o.in.v = qkv[2];
  const int64_t rows = o.ctx.relative.num_rows;
  if (c2p) o.in.pos_key = at::randn({heads, rows + 3, d}).narrow(1, 2, rows);
  if (p2c) o.in.pos_query = at::randn({heads, rows + 3, d}).narrow(1, 1, rows);
  return o;
}

// The op-by-op attention of DisentangledSelfAttention.
at::Tensor Reference(const Operands& o) {
  const at::Tensor& q = o.in.q;
  const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2);
  at::Tensor scores = at::matmul(q, o.in.k.transpose(-1, -2));
  if (o.in.pos_key.defined()) {
    at::Tensor c2p = at::matmul(q, o.in.pos_key.transpose(-1, -2).unsqueeze(0));
    scores = scores + c2p.gather(-1, o.ctx.relative.c2p_index.expand({batch, heads, length, length}));
  }
  if (o.in.pos_query.defined()) {
    at::Tensor p2c = at::matmul(o.in.k, o.in.pos_query.transpose(-1, -2).unsqueeze(0));
    scores = scores + p2c.gather(-1, o.ctx.relative.p2c_index.expand({batch, heads, length, length})).transpose(-1, -2);
  }
  scores = scores + o.ctx.padding.key_bias;
  return at::matmul(at::softmax(scores, -1), o.in.v).permute({0, 2, 1, 3}).reshape({batch, length, -1});
}

DebertaConfig Config(int64_t position_buckets, int64_t max_relative_positions = 32) {
  DebertaConfig config;
  config.relative_attention = true;
  config.max_relative_positions = max_relative_positions;
  config.position_buckets = position_buckets;
  return config;
}

void ExpectMatches(const Operands& o) {
  ASSERT_TRUE(CpuAttentionApplies(o.in, o.ctx));
  const at::Tensor got = CpuAttention(o.in, o.ctx), want = Reference(o);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-5)) << "largest difference " << (got - want).abs().max().item<float>();
}

TEST(CpuAttentionTest, MatchesTheOpByOpAttentionWithBothPositionTerms) {
  if (!CpuKernels().fused_attention_float32) GTEST_SKIP() << "the CPU backend has no fused attention (no oneDNN)";
  at::manual_seed(1);
  // Longer than the span (32): clamped rows, the index is read.
  Operands clamped = MakeOperands(Config(0), {37, 20, 1}, 3, 16, true, true);
  EXPECT_LT(clamped.ctx.relative.affine_reach, 37);
  ExpectMatches(clamped);
  // Within it: i - j + offset, read as contiguous slices (lengths off the
  // 16-wide tiles).
  Operands affine = MakeOperands(Config(0), {29, 20, 1}, 3, 16, true, true);
  EXPECT_GE(affine.ctx.relative.affine_reach, 29);
  ExpectMatches(affine);
}

TEST(CpuAttentionTest, MatchesOnLongerAffineSequences) {
  if (!CpuKernels().fused_attention_float32) GTEST_SKIP() << "the CPU backend has no fused attention (no oneDNN)";
  at::manual_seed(5);
  // Affine, the 8 x 8 blocks whole (64) and not (77), several sequences
  // through the products made once for the batch.
  for (int64_t length : {77, 64}) {
    Operands o = MakeOperands(Config(0, 128), {length, 40, 1}, 2, 16, true, true);
    ASSERT_GE(o.ctx.relative.affine_reach, length);
    ExpectMatches(o);
  }
  ExpectMatches(MakeOperands(Config(0, 128), {70}, 2, 8, false, true));
  ExpectMatches(MakeOperands(Config(0, 128), {70}, 2, 8, true, false));
}

TEST(CpuAttentionTest, MatchesWithLogBucketsAndOneTermOrNone) {
  if (!CpuKernels().fused_attention_float32) GTEST_SKIP() << "the CPU backend has no fused attention (no oneDNN)";
  at::manual_seed(2);
  ExpectMatches(MakeOperands(Config(8), {50, 9}, 2, 8, true, false));
  ExpectMatches(MakeOperands(Config(8), {50, 9}, 2, 8, false, true));
  ExpectMatches(MakeOperands(Config(0), {17}, 2, 8, true, false));  // Affine, one term.
  ExpectMatches(MakeOperands(Config(0), {17}, 2, 8, false, true));
  ExpectMatches(MakeOperands(Config(0), {5}, 4, 4, false, false));
}

TEST(CpuAttentionTest, PortableKernelsMatchToo) {
  if (!CpuKernels().fused_attention_float32) GTEST_SKIP() << "the CPU backend has no fused attention (no oneDNN)";
  at::manual_seed(4);
  ScopedCpuKernelMode portable(CpuKernelMode::kPortable);  // The position terms and softmax without intrinsics.
  ExpectMatches(MakeOperands(Config(0), {29, 20, 1}, 3, 16, true, true));
  ExpectMatches(MakeOperands(Config(0), {17}, 2, 8, false, true));
  ExpectMatches(MakeOperands(Config(8), {50, 9}, 2, 8, true, true));
}

TEST(CpuAttentionTest, MatchesInBFloat16WithinItsRounding) {
  if (!CpuKernels().FusedAttention(at::kBFloat16)) {
    GTEST_SKIP() << "the CPU backend runs the bfloat16 attention op by op here: " << CpuKernels().reasons;
  }
  at::manual_seed(3);
  Operands o = MakeOperands(Config(0), {40, 17}, 3, 16, true, true);
  Operands bf16 = o;
  for (at::Tensor* t : {&bf16.in.q, &bf16.in.k, &bf16.in.v, &bf16.in.pos_key, &bf16.in.pos_query}) {
    *t = t->to(at::kBFloat16);
  }
  // The reference on the same (rounded) values in float32: what is left is
  // the probabilities' rounding to bfloat16 before the product with v.
  Operands rounded = bf16;
  for (at::Tensor* t : {&rounded.in.q, &rounded.in.k, &rounded.in.v, &rounded.in.pos_key, &rounded.in.pos_query}) {
    *t = t->to(at::kFloat);
  }
  ASSERT_TRUE(CpuAttentionApplies(bf16.in, bf16.ctx));
  const at::Tensor got = CpuAttention(bf16.in, bf16.ctx), want = Reference(rounded);
  EXPECT_EQ(got.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(got, want, 2e-2, 2e-2)) << "largest difference " << (got - want).abs().max().item<float>();
}

// bfloat16 operands as the fused projection leaves them: q, k and v views of
// one [B, L, 3, n, d] tensor; the reference on the same values in float32.
void ExpectBFloat16Matches(const Operands& o) {
  const at::Tensor qkv = at::stack({o.in.q, o.in.k, o.in.v})  // [3, B, n, L, d]
                             .permute({1, 3, 0, 2, 4})
                             .contiguous()
                             .to(at::kBFloat16)
                             .permute({2, 0, 3, 1, 4});
  Operands bf16 = o;
  bf16.in.q = qkv[0];
  bf16.in.k = qkv[1];
  bf16.in.v = qkv[2];
  for (at::Tensor* t : {&bf16.in.pos_key, &bf16.in.pos_query}) *t = t->to(at::kBFloat16);
  ASSERT_GT(bf16.in.q.stride(2), bf16.in.q.size(1) * bf16.in.q.size(3)) << "the heads must be strided views";
  Operands rounded = bf16;
  for (at::Tensor* t : {&rounded.in.q, &rounded.in.k, &rounded.in.v, &rounded.in.pos_key, &rounded.in.pos_query}) {
    *t = t->to(at::kFloat);
  }
  ASSERT_TRUE(CpuAttentionApplies(bf16.in, bf16.ctx));
  const at::Tensor got = CpuAttention(bf16.in, bf16.ctx), want = Reference(rounded);
  EXPECT_TRUE(at::allclose(got, want, 2e-2, 2e-2))
      << "length " << o.in.q.size(2) << ": largest difference " << (got - want).abs().max().item<float>();
}

// From 256 tokens the bfloat16 heads are copied dense before the products
// (cpu_attention.cc, kDenseHeadsFrom); below they are read in place. Both,
// with heads of 64 (the copy's 128-byte rows) and of 16, padded sequences,
// both position terms, v1's spans and v3's log buckets.
TEST(CpuAttentionTest, MatchesInBFloat16OnStridedHeadsBelowAndFromTheDenseLength) {
  if (!CpuKernels().FusedAttention(at::kBFloat16)) {
    GTEST_SKIP() << "the CPU backend runs the bfloat16 attention op by op here: " << CpuKernels().reasons;
  }
  at::manual_seed(5);
  ExpectBFloat16Matches(MakeOperands(Config(0, 64), {100, 61}, 2, 64, true, true));
  ExpectBFloat16Matches(MakeOperands(Config(0, 64), {260, 201}, 2, 64, true, true));
  ExpectBFloat16Matches(MakeOperands(Config(64, 128), {300, 255}, 3, 16, true, true));
}

TEST(CpuAttentionTest, RefusesOperandsItDoesNotTake) {
  if (!CpuKernels().fused_attention_float32) GTEST_SKIP() << "the CPU backend has no fused attention (no oneDNN)";
  Operands o = MakeOperands(Config(0), {6, 4}, 2, 8, true, true);
  Operands mixed = o;
  mixed.in.q = o.in.q.to(at::kBFloat16);  // k and v float32.
  EXPECT_FALSE(CpuAttentionApplies(mixed.in, mixed.ctx));
  Operands other_length = o;
  other_length.in.q = o.in.q.narrow(2, 0, 5);  // Lq != Lk.
  EXPECT_FALSE(CpuAttentionApplies(other_length.in, other_length.ctx));
  Operands strided = o;
  strided.in.v = o.in.v.transpose(-1, -2);  // Columns not contiguous.
  EXPECT_FALSE(CpuAttentionApplies(strided.in, strided.ctx));
  ScopedCpuKernelMode libtorch(CpuKernelMode::kLibTorch);  // The backend's op-by-op choice.
  EXPECT_FALSE(CpuAttentionApplies(o.in, o.ctx));
}

}  // namespace
}  // namespace deberta::model
