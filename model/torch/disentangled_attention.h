// Disentangled self-attention (docs/deberta-model.md section 6) and the attention block
// around it (output projection, residual on the query source, LayerNorm).
// Both checkpoint layouts: v1's fused per-head in_proj with q_bias/v_bias,
// pos_proj and pos_q_proj; v2's split query/key/value projections with
// share_att_key or separate position projections.
#ifndef DEBERTA_MODEL_TORCH_DISENTANGLED_ATTENTION_H_
#define DEBERTA_MODEL_TORCH_DISENTANGLED_ATTENTION_H_

#include "model/config.h"
#include "model/torch/attention_context.h"
#include "model/torch/cpu_attention.h"
#include "model/torch/layers.h"

namespace deberta::model {

// Checkpoint scope "attention.self". Not thread-safe to Prepare; forward is
// const and may run concurrently once prepared.
class DisentangledSelfAttentionImpl : public torch::nn::Module {
 public:
  explicit DisentangledSelfAttentionImpl(const DebertaConfig& config);

  // Derives what forward uses from the loaded parameters: one fused [q;k;v]
  // projection in `compute_dtype`, and the position projections of the
  // (already normalized) relative table `rel_table` [2S, H], which do not
  // depend on the input and so are computed once here, not per request.
  // The projection layers it reads are released afterwards (empty).
  void Prepare(const at::Tensor& rel_table, at::ScalarType compute_dtype);
  // After Prepare: the q/k/v products in int8 (Int8Linear; queries, keys
  // and values then cast to the compute dtype), the fused weight dropped.
  void QuantizeToInt8();
  // After Prepare (and instead of QuantizeToInt8): the q/k/v products on
  // weights packed for oneDNN's blocked CPU kernels (PackedLinear), the
  // fused weight dropped; nothing changes where those do not apply. With
  // `split`, queries and keys+values are also packed apart (the last layer:
  // EMD's queries come from other states than its keys and values); other
  // layers given different states run the fused product on both.
  void PackForCpu(bool split);

  // Attention context vectors [B, Lq, A], in the compute dtype (float32
  // from CpuAttention, on the CPU with oneDNN), for
  // queries from `query_states`
  // and keys/values from `key_value_states` (the same tensor in the encoder,
  // different in the Enhanced Mask Decoder).
  at::Tensor forward(const at::Tensor& query_states, const at::Tensor& key_value_states,
                     const AttentionContext& ctx) const;
  // Makes the oneDNN primitives of the CPU attention (PrepareCpuAttention)
  // that forward would for one sequence of ctx's length with queries and
  // keys from one state, without computing anything. A no-op where forward
  // would not take that path.
  void PrepareCpuAttentionKernels(const AttentionContext& ctx) const;
  // The q/k/v products' primitives for every row count (PrepareRowGrid of
  // the packed or quantized products); computes nothing.
  void PrepareProjectionRowGrid() const;

  // v1 layout.
  Dense in_proj{nullptr};
  at::Tensor q_bias, v_bias;
  Dense pos_proj{nullptr}, pos_q_proj{nullptr};
  // v2 layout.
  Dense query_proj{nullptr}, key_proj{nullptr}, value_proj{nullptr};
  Dense pos_key_proj{nullptr}, pos_query_proj{nullptr};

 private:
  DebertaConfig config_;
  int64_t heads_, head_size_;
  double scale_;
  at::Tensor qkv_weight_, qkv_bias_;  // [3A, H], [3A]: queries, keys, values.
  // With int8: the fused product, and queries and keys+values apart (EMD's
  // queries come from other states than its keys and values).
  Int8Linear qkv_int8_, q_int8_, kv_int8_;
  PackedLinear qkv_packed_, q_packed_, kv_packed_;  // Likewise, packed (q and kv only with split).
  at::ScalarType compute_dtype_ = at::kFloat;
  at::Tensor pos_key_;                // [n, 2S, d] Kr for c2p, compute dtype.
  at::Tensor pos_query_;              // [n, 2S, d] Qr for p2c, pre-scaled, compute dtype.

  // x [B, L, H] times the fused projection's rows [first, first + count)
  // (queries 0..A, keys A..2A, values 2A..3A), in the compute dtype.
  at::Tensor Project(const at::Tensor& x, int64_t first, int64_t count) const;
  // The CPU attention's operands: q, k, v [B, n, L, d] and the position
  // tables' rows ctx needs.
  CpuAttentionInputs CpuInputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const AttentionContext& ctx) const;
};
TORCH_MODULE(DisentangledSelfAttention);

// Checkpoint scope "attention.output".
class SelfOutputImpl : public torch::nn::Module {
 public:
  explicit SelfOutputImpl(const DebertaConfig& config);
  Dense dense{nullptr};
  Norm LayerNorm{nullptr};  // Named as in checkpoints.
};
TORCH_MODULE(SelfOutput);

// Checkpoint scope "attention": LN(output.dense(self(q, kv)) + q).
class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const DebertaConfig& config);
  at::Tensor forward(const at::Tensor& query_states, const at::Tensor& key_value_states,
                     const AttentionContext& ctx) const;

  DisentangledSelfAttention self{nullptr};
  SelfOutput output{nullptr};
};
TORCH_MODULE(Attention);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_DISENTANGLED_ATTENTION_H_
