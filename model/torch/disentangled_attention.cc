// Disentangled attention: content, content-to-position and
// position-to-content scores computed with gathers on [query, rows] score
// matrices; never a [L, L, hidden] tensor.
#include "model/torch/disentangled_attention.h"

#include <ATen/ATen.h>

#include <cmath>

#include "model/torch/cpu_attention.h"
#include "model/torch/cpu_backend.h"
#include "model/torch/cpu_sgemm.h"

namespace deberta::model {
namespace {

// [2S, A] -> [n, 2S, d]: per-head position vectors.
at::Tensor SplitRowsIntoHeads(const at::Tensor& x, int64_t heads, int64_t head_size) {
  return x.view({x.size(0), heads, head_size}).permute({1, 0, 2}).contiguous();
}

// a b^T (transpose_b) or a b over the last two dimensions: in float32 on
// the CPU by oneDNN's sgemm on the views as they are (LibTorch's would copy
// the strided q, k, v and run OpenBLAS), otherwise at::matmul.
at::Tensor Product(const at::Tensor& a, const at::Tensor& b, bool transpose_b) {
  if (CpuSgemmProductApplies(a, b)) return CpuSgemmProduct(a, b, transpose_b);
  return at::matmul(a, transpose_b ? b.transpose(-1, -2) : b);
}

}  // namespace

DisentangledSelfAttentionImpl::DisentangledSelfAttentionImpl(const DebertaConfig& config)
    : config_(config),
      heads_(config.num_attention_heads),
      head_size_(config.attention_head_size),
      scale_(1.0 / std::sqrt(static_cast<double>(config.attention_head_size *
                                                 config.ScaleFactor()))) {
  const int64_t h = config.hidden_size, a = config.AllHeadSize();
  const bool relative = config.relative_attention;
  if (config.layout == CheckpointLayout::kV1) {
    in_proj = register_module("in_proj", Dense(h, 3 * a, /*with_bias=*/false));
    q_bias = register_parameter("q_bias", at::zeros({a}), /*requires_grad=*/false);
    v_bias = register_parameter("v_bias", at::zeros({a}), /*requires_grad=*/false);
    if (relative && config.c2p) pos_proj = register_module("pos_proj", Dense(h, a, false));
    if (relative && config.p2c) pos_q_proj = register_module("pos_q_proj", Dense(h, a, true));
  } else {
    query_proj = register_module("query_proj", Dense(h, a, true));
    key_proj = register_module("key_proj", Dense(h, a, true));
    value_proj = register_module("value_proj", Dense(h, a, true));
    if (relative && !config.share_att_key) {
      if (config.c2p) pos_key_proj = register_module("pos_key_proj", Dense(h, a, true));
      if (config.p2c) pos_query_proj = register_module("pos_query_proj", Dense(h, a, true));
    }
  }
}

void DisentangledSelfAttentionImpl::Prepare(const at::Tensor& rel_table,
                                            at::ScalarType compute_dtype) {
  const int64_t a = config_.AllHeadSize(), h = config_.hidden_size;
  compute_dtype_ = compute_dtype;
  at::Tensor weight, bias;
  if (config_.layout == CheckpointLayout::kV1) {
    // in_proj rows are grouped per head as [q_h | k_h | v_h]; regroup them
    // as [all queries | all keys | all values]. The key has no bias in v1.
    weight = in_proj->weight.view({heads_, 3, head_size_, h}).transpose(0, 1).reshape({3 * a, h});
    bias = at::cat({q_bias, at::zeros_like(q_bias), v_bias});
  } else {
    weight = at::cat({query_proj->weight, key_proj->weight, value_proj->weight});
    bias = at::cat({query_proj->bias, key_proj->bias, value_proj->bias});
  }
  if (config_.relative_attention) {
    at::Tensor kr, qr;
    if (config_.layout == CheckpointLayout::kV1) {
      if (config_.c2p) kr = at::linear(rel_table, pos_proj->weight);
      if (config_.p2c) qr = at::linear(rel_table, pos_q_proj->weight, pos_q_proj->bias);
    } else if (config_.share_att_key) {
      // Position vectors go through the content projections, biases included.
      if (config_.c2p) kr = at::linear(rel_table, key_proj->weight, key_proj->bias);
      if (config_.p2c) qr = at::linear(rel_table, query_proj->weight, query_proj->bias);
    } else {
      if (config_.c2p) kr = at::linear(rel_table, pos_key_proj->weight, pos_key_proj->bias);
      if (config_.p2c) qr = at::linear(rel_table, pos_query_proj->weight, pos_query_proj->bias);
    }
    if (kr.defined()) pos_key_ = SplitRowsIntoHeads(kr, heads_, head_size_).to(compute_dtype);
    if (qr.defined()) {
      pos_query_ = SplitRowsIntoHeads(qr * scale_, heads_, head_size_).to(compute_dtype);
    }
  }
  // Fold the score scale into the query projection: s * (x Wq^T + bq)
  // scales both the content and the c2p term without a pass over q.
  weight = weight.clone();
  bias = bias.clone();
  weight.narrow(0, 0, a).mul_(scale_);
  bias.narrow(0, 0, a).mul_(scale_);
  qkv_weight_ = weight.to(compute_dtype).contiguous();
  qkv_bias_ = bias.to(compute_dtype).contiguous();
  // Everything forward needs of these projections is in the fused weight and
  // the position tables now: keep no second copy.
  for (Dense* dense : {&in_proj, &pos_proj, &pos_q_proj, &query_proj, &key_proj, &value_proj,
                       &pos_key_proj, &pos_query_proj}) {
    if (*dense) (*dense)->Release();
  }
}

void DisentangledSelfAttentionImpl::QuantizeToInt8() {
  const int64_t a = config_.AllHeadSize();
  qkv_int8_ = Int8Linear::Pack(qkv_weight_, qkv_bias_);
  q_int8_ = Int8Linear::Pack(qkv_weight_.narrow(0, 0, a), qkv_bias_.narrow(0, 0, a));
  kv_int8_ = Int8Linear::Pack(qkv_weight_.narrow(0, a, 2 * a), qkv_bias_.narrow(0, a, 2 * a));
  qkv_weight_ = at::Tensor();
  qkv_bias_ = at::Tensor();
}

void DisentangledSelfAttentionImpl::PackForCpu(bool split) {
  if (qkv_int8_.defined() || qkv_packed_.defined() || !qkv_weight_.defined()) return;
  qkv_packed_ = PackedLinear::Pack(qkv_weight_, qkv_bias_);
  if (!qkv_packed_.defined()) return;
  if (split) {
    const int64_t a = config_.AllHeadSize();
    q_packed_ = PackedLinear::Pack(qkv_weight_.narrow(0, 0, a), qkv_bias_.narrow(0, 0, a));
    kv_packed_ = PackedLinear::Pack(qkv_weight_.narrow(0, a, 2 * a), qkv_bias_.narrow(0, a, 2 * a));
    if (!q_packed_.defined() || !kv_packed_.defined()) q_packed_ = kv_packed_ = PackedLinear();
  }
  qkv_weight_ = at::Tensor();
  qkv_bias_ = at::Tensor();
}

at::Tensor DisentangledSelfAttentionImpl::Project(const at::Tensor& x, int64_t first, int64_t count) const {
  const int64_t a = config_.AllHeadSize();
  const bool all = first == 0 && count == 3 * a, queries = first == 0 && count == a;
  if (qkv_int8_.defined()) {
    const Int8Linear& linear = all ? qkv_int8_ : queries ? q_int8_ : kv_int8_;
    return linear.forward(x, compute_dtype_);
  }
  if (qkv_packed_.defined()) {
    const PackedLinear& linear = all ? qkv_packed_ : queries ? q_packed_ : kv_packed_;
    if (linear.defined()) return linear.Forward(x, compute_dtype_);
    return qkv_packed_.Forward(x, compute_dtype_).narrow(-1, first, count);  // Not packed apart.
  }
  return LinearInDType(x, qkv_weight_.narrow(0, first, count), qkv_bias_.narrow(0, first, count));
}

CpuAttentionInputs DisentangledSelfAttentionImpl::CpuInputs(const at::Tensor& q, const at::Tensor& k,
                                                           const at::Tensor& v, const AttentionContext& ctx) const {
  CpuAttentionInputs in{q, k, v, at::Tensor(), at::Tensor()};
  const RelativeGeometry& relative = ctx.relative;
  if (config_.relative_attention && config_.c2p) in.pos_key = pos_key_.narrow(1, relative.first_row, relative.num_rows);
  if (config_.relative_attention && config_.p2c) in.pos_query = pos_query_.narrow(1, relative.first_row, relative.num_rows);
  return in;
}

void DisentangledSelfAttentionImpl::PrepareProjectionRowGrid() const {
  for (const Int8Linear* linear : {&qkv_int8_, &q_int8_, &kv_int8_}) {
    if (linear->defined()) linear->PrepareRowGrid(compute_dtype_);
  }
  for (const PackedLinear* linear : {&qkv_packed_, &q_packed_, &kv_packed_}) {
    if (linear->defined()) linear->PrepareRowGrid(compute_dtype_);
  }
}

void DisentangledSelfAttentionImpl::PrepareCpuAttentionKernels(const AttentionContext& ctx) const {
  const int64_t length = ctx.padding.key_bias.size(-1), a = config_.AllHeadSize();
  if (!CpuKernels().FusedAttention(compute_dtype_)) return;
  // Laid out as Project's result for one sequence: only shapes and strides are read.
  const at::Tensor qkv = at::empty({1, length, 3 * a}, at::TensorOptions().dtype(compute_dtype_))
                             .view({1, length, 3, heads_, head_size_})
                             .permute({2, 0, 3, 1, 4});
  const CpuAttentionInputs in = CpuInputs(qkv[0], qkv[1], qkv[2], ctx);
  if (CpuAttentionApplies(in, ctx)) PrepareCpuAttention(in, ctx);
}

at::Tensor DisentangledSelfAttentionImpl::forward(const at::Tensor& query_states,
                                                  const at::Tensor& key_value_states,
                                                  const AttentionContext& ctx) const {
  const int64_t batch = query_states.size(0), lq = query_states.size(1),
                lk = key_value_states.size(1), a = config_.AllHeadSize();
  at::Tensor q, k, v;  // [B, n, L, d]
  if (query_states.is_same(key_value_states)) {
    at::Tensor qkv = Project(query_states, 0, 3 * a).view({batch, lq, 3, heads_, head_size_}).permute({2, 0, 3, 1, 4});
    q = qkv[0];
    k = qkv[1];
    v = qkv[2];
  } else {
    q = Project(query_states, 0, a).view({batch, lq, heads_, head_size_}).permute({0, 2, 1, 3});
    at::Tensor kv =
        Project(key_value_states, a, 2 * a).view({batch, lk, 2, heads_, head_size_}).permute({2, 0, 3, 1, 4});
    k = kv[0];
    v = kv[1];
  }
  // On the CPU where the backend has oneDNN's products for this dtype.
  if (q.device().is_cpu() && CpuKernels().FusedAttention(q.scalar_type())) {
    const CpuAttentionInputs in = CpuInputs(q, k, v, ctx);
    if (CpuAttentionApplies(in, ctx)) return CpuAttention(in, ctx);
  }
  // q carries the scale (folded into its projection); Qr is pre-scaled.
  // Products run in the compute dtype; scores, the mask and the softmax in
  // float32 (docs/deberta-model.md section 6.4).
  at::Tensor scores = Product(q, k, /*transpose_b=*/true).to(at::kFloat);  // [B, n, Lq, Lk]

  at::Tensor c2p, p2c;  // [B, n, Lq, R], [B, n, Lk, R]: each query/key against the table's needed rows.
  if (config_.relative_attention) {
    const int64_t rows = ctx.relative.num_rows;
    // Multiply per head against the needed rows: [n, B*L, d] x [n, d, R].
    auto by_head = [&](const at::Tensor& x, int64_t len) {
      return x.permute({1, 0, 2, 3}).reshape({heads_, batch * len, head_size_});
    };
    auto back = [&](const at::Tensor& x, int64_t len) {
      return x.view({heads_, batch, len, rows}).permute({1, 0, 2, 3});
    };
    // x [B, n, L, d] against a table's rows [n, R, d]: [B, n, L, R].
    auto against = [&](const at::Tensor& x, int64_t len, const at::Tensor& table) {
      const at::Tensor per_batch = table.unsqueeze(0);
      if (CpuSgemmProductApplies(x, per_batch)) return CpuSgemmProduct(x, per_batch, /*transpose_b=*/true);
      return back(at::bmm(by_head(x, len), table.transpose(1, 2)), len);
    };
    if (config_.c2p) c2p = against(q, lq, pos_key_.narrow(1, ctx.relative.first_row, rows));
    if (config_.p2c) p2c = against(k, lk, pos_query_.narrow(1, ctx.relative.first_row, rows));
  }
  if (c2p.defined()) scores.add_(c2p.gather(-1, ctx.relative.c2p_index.expand({batch, heads_, lq, lk})));
  if (p2c.defined()) {
    scores.add_(p2c.gather(-1, ctx.relative.p2c_index.expand({batch, heads_, lk, lq})).transpose(-1, -2));
  }
  scores.add_(ctx.padding.key_bias);
  at::Tensor probs = at::softmax(scores, -1).to(v.scalar_type());
  return Product(probs, v, /*transpose_b=*/false).permute({0, 2, 1, 3}).reshape({batch, lq, a});
}

SelfOutputImpl::SelfOutputImpl(const DebertaConfig& config) {
  dense = register_module("dense", Dense(config.AllHeadSize(), config.hidden_size, true));
  LayerNorm = register_module("LayerNorm", Norm(config.hidden_size, config.layer_norm_eps));
}

AttentionImpl::AttentionImpl(const DebertaConfig& config) {
  self = register_module("self", DisentangledSelfAttention(config));
  output = register_module("output", SelfOutput(config));
}

at::Tensor AttentionImpl::forward(const at::Tensor& query_states,
                                  const at::Tensor& key_value_states,
                                  const AttentionContext& ctx) const {
  at::Tensor context = self->forward(query_states, key_value_states, ctx);  // Compute dtype.
  // The residual is the query source (matters for EMD).
  return output->LayerNorm->forward(output->dense->forward(context).add_(query_states));
}

}  // namespace deberta::model
