// CpuAttention on oneDNN's matmul primitive (batched over heads).
#include "model/torch/cpu_attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <c10/util/Exception.h>

#include <optional>
#include <vector>

#include "model/torch/cpu_backend.h"
#include "model/torch/relative_score_terms.h"
#include "model/torch/row_softmax.h"

#ifdef DEBERTA_WITH_ONEDNN
#include "model/torch/onednn_engine.h"
#endif

namespace deberta::model {
namespace {

#ifdef DEBERTA_WITH_ONEDNN
bool OnCpuIn(const at::Tensor& t, at::ScalarType dtype) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == dtype;
}

// [B, n, L, d] with unit last stride.
bool HeadRows(const at::Tensor& t, const at::Tensor& q) {
  return OnCpuIn(t, q.scalar_type()) && t.dim() == 4 && t.sizes() == q.sizes() && t.stride(3) == 1;
}

// Head h's rows of a contiguous [n, L, R] position term; null if undefined.
const float* TermRows(const at::Tensor& term, int64_t h, int64_t length, int64_t rows) {
  return term.defined() ? term.data_ptr<float>() + h * length * rows : nullptr;
}

using dnnl::memory;

memory::desc Desc(const at::Tensor& t) {
  const memory::data_type type = t.scalar_type() == at::kBFloat16 ? memory::data_type::bf16 : memory::data_type::f32;
  return memory::desc(memory::dims(t.sizes().begin(), t.sizes().end()), type,
                      memory::dims(t.strides().begin(), t.strides().end()));
}

// dst = a b over the last two dimensions, batched over the first (the
// heads), each operand a strided view; all intra-op threads. Made once for
// operands of one shape and strides (every sequence's of a batch) and run
// on each: a primitive descriptor costs tens of microseconds.
class HeadMatmul {
 public:
  HeadMatmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& dst)
      : a_md_(Desc(a)), b_md_(Desc(b)), dst_md_(Desc(dst)) {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // Ours: concurrent callers never share one.
#if DNNL_VERSION_MAJOR >= 3
    const dnnl::matmul::primitive_desc pd(OnednnCpuEngine(), a_md_, b_md_, dst_md_, attr);
#else
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md_, b_md_, dst_md_), attr, OnednnCpuEngine());
#endif
    matmul_ = dnnl::matmul(pd);  // oneDNN caches primitives by shape.
    scratch_md_ = pd.scratchpad_desc();
    scratch_ = at::empty({static_cast<int64_t>(scratch_md_.get_size())}, at::kByte);
  }

  // REQUIRES: operands of the constructor's shapes and strides.
  void Run(const at::Tensor& a, const at::Tensor& b, const at::Tensor& dst) const {
    const dnnl::engine& engine = OnednnCpuEngine();
    dnnl::stream stream(engine);
    matmul_.execute(stream, {{DNNL_ARG_SRC, memory(a_md_, engine, a.data_ptr())},
                             {DNNL_ARG_WEIGHTS, memory(b_md_, engine, b.data_ptr())},
                             {DNNL_ARG_DST, memory(dst_md_, engine, dst.data_ptr())},
                             {DNNL_ARG_SCRATCHPAD, memory(scratch_md_, engine, scratch_.data_ptr())}});
    stream.wait();
  }

 private:
  memory::desc a_md_, b_md_, dst_md_, scratch_md_;
  dnnl::matmul matmul_;
  at::Tensor scratch_;
};

#endif

}  // namespace

bool CpuAttentionApplies(const CpuAttentionInputs& in, const AttentionContext& ctx) {
#ifndef DEBERTA_WITH_ONEDNN
  (void)in;
  (void)ctx;
  return false;
#else
  const at::Tensor& q = in.q;
  if (!q.defined() || q.dim() != 4 || !q.device().is_cpu() || !CpuKernels().FusedAttention(q.scalar_type()) ||
      q.stride(3) != 1) {
    return false;
  }
  if (!HeadRows(in.k, q) || !HeadRows(in.v, q)) return false;  // Same shape: queries and keys of one length.
  const int64_t batch = q.size(0), heads = q.size(1), length = q.size(2), d = q.size(3);
  const at::Tensor& bias = ctx.padding.key_bias;
  if (!OnCpuIn(bias, at::kFloat) || bias.dim() != 4 || bias.size(0) != batch || bias.size(3) != length ||
      bias.stride(3) != 1) {
    return false;
  }
  if (!in.pos_key.defined() && !in.pos_query.defined()) return true;
  const int64_t rows = in.pos_key.defined() ? in.pos_key.size(1) : in.pos_query.size(1);
  auto table_fits = [&](const at::Tensor& t) {
    return !t.defined() || (OnCpuIn(t, q.scalar_type()) && t.dim() == 3 && t.size(0) == heads &&
                            t.size(1) == rows && t.size(2) == d && t.stride(2) == 1);
  };
  return table_fits(in.pos_key) && table_fits(in.pos_query) &&
         static_cast<int64_t>(ctx.relative.row_by_distance.size()) == 2 * length - 1;
#endif
}

#ifndef DEBERTA_WITH_ONEDNN
at::Tensor CpuAttention(const CpuAttentionInputs&, const AttentionContext&) {
  TORCH_CHECK(false, "this build has no oneDNN");
}
void PrepareCpuAttention(const CpuAttentionInputs&, const AttentionContext&) {
  TORCH_CHECK(false, "this build has no oneDNN");
}
#else
namespace {

// The sequence length from which bfloat16 heads are copied dense. The
// products take dense heads: on the strided views of the fused q/k/v output
// (a row stride of 3 n d, heads d apart) oneDNN 2.6 leaves its brgemm
// kernels (AMX, AVX-512) for gemm:jit, at a half to a third of their rate.
// With the copies against without, model_bench (deberta-base, 2 threads, 3 paired
// rounds) ran 1.03-1.21x at 256 tokens and 1.09-1.25x at 512, level at
// 128 (0.95-1.06): there the copies cost what the faster products save.
// Float32 is left strided: oneDNN's float32 gemm runs the strided views
// well, and the copies made 1 x 512 0.90x.
constexpr int64_t kDenseHeadsFrom = 256;

bool UseDenseHeads(at::ScalarType dtype, int64_t length) {
  return dtype == at::kBFloat16 && length >= kDenseHeadsFrom;
}

// CpuAttention, or with `run` false only its primitives made.
at::Tensor RunCpuAttention(const CpuAttentionInputs& in, const AttentionContext& ctx, bool run) {
  const int64_t batch = in.q.size(0), heads = in.q.size(1), length = in.q.size(2), d = in.q.size(3);
  const int64_t rows = in.pos_key.defined() ? in.pos_key.size(1) : in.pos_query.defined() ? in.pos_query.size(1) : 0;
  const at::TensorOptions floats = in.q.options().dtype(at::kFloat);
  at::Tensor out = at::empty({batch, length, heads * d}, floats);  // [B, L, n, d] as [B, L, A].
  if (out.numel() == 0) return out;
  // One sequence's matrices, reused from one sequence to the next.
  at::Tensor scores = at::empty({heads, length, length}, floats);
  // The softmax's output: the scores themselves in float32.
  const at::Tensor probs = in.v.scalar_type() == at::kFloat ? scores : at::empty_like(scores, in.v.options());
  at::Tensor c2p = in.pos_key.defined() ? at::empty({heads, length, rows}, floats) : at::Tensor();
  at::Tensor p2c = in.pos_query.defined() ? at::empty({heads, length, rows}, floats) : at::Tensor();
  const RelativeRows relative_rows{ctx.relative.row_by_distance.data(), ctx.relative.affine_offset,
                                   ctx.relative.affine_reach};
  // From kDenseHeadsFrom tokens, bfloat16 products run on dense copies of
  // the sequence's heads (kDenseHeadsFrom says why), and write its context
  // [n, L, d] dense before it goes into its rows of `out`: one sequence at
  // a time, so that the products read the copies from cache.
  const bool dense = UseDenseHeads(in.q.scalar_type(), length);
  const at::Tensor dense_q = dense ? at::empty({1, heads, length, d}, in.q.options()) : at::Tensor();
  const at::Tensor dense_k = dense ? at::empty_like(dense_q) : at::Tensor();
  const at::Tensor dense_v = dense ? at::empty_like(dense_q) : at::Tensor();
  const at::Tensor dense_context = dense ? at::empty({1, heads, length, d}, floats) : at::Tensor();
  // Sequence b's operands [n, L, d], and where its context goes.
  const at::Tensor out_heads = out.view({batch, length, heads, d}).transpose(1, 2);  // [B, n, L, d]
  auto q_of = [&](int64_t b) { return dense ? dense_q[0] : in.q[b]; };
  auto k_of = [&](int64_t b) { return dense ? dense_k[0] : in.k[b]; };
  auto v_of = [&](int64_t b) { return dense ? dense_v[0] : in.v[b]; };
  auto context_of = [&](int64_t b) { return dense ? dense_context[0] : out_heads[b]; };
  try {
    const HeadMatmul content(q_of(0), k_of(0).transpose(1, 2), scores);
    // On the dense path the position tables dense too (one copy per layer).
    auto table_t = [&](const at::Tensor& t) { return (dense ? t.contiguous() : t).transpose(1, 2); };
    const at::Tensor pos_key_t = c2p.defined() ? table_t(in.pos_key) : at::Tensor();
    const at::Tensor pos_query_t = p2c.defined() ? table_t(in.pos_query) : at::Tensor();
    std::optional<HeadMatmul> c2p_product, p2c_product;
    if (c2p.defined()) c2p_product.emplace(q_of(0), pos_key_t, c2p);
    if (p2c.defined()) p2c_product.emplace(k_of(0), pos_query_t, p2c);
    const HeadMatmul values(probs, v_of(0), context_of(0));
    if (!run) return out;
    // Each step records itself, so that op_profile tells where the
    // attention's time goes (each is one call per sequence and layer; a
    // record costs nothing while no profiler listens).
    const std::vector<c10::IValue> no_inputs;
    for (int64_t b = 0; b < batch; ++b) {
      if (dense) {
        RECORD_FUNCTION("deberta::attention_head_copies", no_inputs);
        dense_q.copy_(in.q.narrow(0, b, 1));  // LibTorch's copy: as fast as a loop of our own, measured.
        dense_k.copy_(in.k.narrow(0, b, 1));
        dense_v.copy_(in.v.narrow(0, b, 1));
      }
      const at::Tensor q = q_of(b), k = k_of(b);
      {
        RECORD_FUNCTION("deberta::attention_content", no_inputs);
        content.Run(q, k.transpose(1, 2), scores);
      }
      if (c2p_product.has_value()) {
        RECORD_FUNCTION("deberta::attention_c2p", no_inputs);
        c2p_product->Run(q, pos_key_t, c2p);
      }
      if (p2c_product.has_value()) {
        RECORD_FUNCTION("deberta::attention_p2c", no_inputs);
        p2c_product->Run(k, pos_query_t, p2c);
      }
      const float* key_bias = ctx.padding.key_bias[b].data_ptr<float>();
      // Per head, while its matrix is in cache: the position terms and the
      // key mask, then the softmax, written in the value product's dtype.
      {
        RECORD_FUNCTION("deberta::attention_terms_softmax", no_inputs);
        at::parallel_for(0, heads, 1, [&](int64_t begin, int64_t end) {
          for (int64_t h = begin; h < end; ++h) {
            float* s = scores.data_ptr<float>() + h * length * length;
            AddRelativeScoreTerms(s, length, TermRows(c2p, h, length, rows), rows, TermRows(p2c, h, length, rows),
                                  rows, relative_rows, key_bias);
            if (probs.scalar_type() == at::kBFloat16) {
              SoftmaxRowsToBFloat16(s, length, length,
                                    reinterpret_cast<uint16_t*>(probs.data_ptr<at::BFloat16>()) + h * length * length);
            } else {
              SoftmaxRowsInPlace(s, length, length);
            }
          }
        });
      }
      // The context: into this sequence's rows of `out` ([L, n, d] seen as
      // [n, L, d]), or on the dense path into its copy.
      {
        RECORD_FUNCTION("deberta::attention_values", no_inputs);
        values.Run(probs, v_of(b), context_of(b));
      }
      if (dense) {
        RECORD_FUNCTION("deberta::attention_head_copies", no_inputs);
        out_heads.narrow(0, b, 1).copy_(dense_context);
      }
    }
  } catch (const dnnl::error& e) {
    TORCH_CHECK(false, "oneDNN matmul failed in the attention: ", e.what());
  }
  return out;
}

}  // namespace

at::Tensor CpuAttention(const CpuAttentionInputs& in, const AttentionContext& ctx) {
  RECORD_FUNCTION("deberta::cpu_attention", std::vector<c10::IValue>());  // Named in profiles.
  return RunCpuAttention(in, ctx, /*run=*/true);
}

void PrepareCpuAttention(const CpuAttentionInputs& in, const AttentionContext& ctx) {
  RunCpuAttention(in, ctx, /*run=*/false);
}
#endif  // DEBERTA_WITH_ONEDNN

}  // namespace deberta::model
