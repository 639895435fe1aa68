// The disentangled attention after the q/k/v projections, on the CPU, one
// sequence at a time: its heads' content scores and position terms as
// batched oneDNN matmuls on the strided q/k/v views (no copies), the
// position terms and key mask added and the softmax taken per head while
// the sequence's matrices are in cache, then the product with the values
// written straight into the [B, L, n * d] context. Done op by op for the
// whole batch, every step wrote and re-read [B, n, L, L] and [B, n, L, 2L]
// tensors from memory (12-25 MB a layer at 8 x 128: the position terms
// alone took 5-7 ms of a layer's 23, bench/op_profile), and the products
// ran per (sequence, head) matrix, at a third of a batched matmul's rate.
#ifndef DEBERTA_MODEL_TORCH_CPU_ATTENTION_H_
#define DEBERTA_MODEL_TORCH_CPU_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include "model/torch/attention_context.h"

namespace deberta::model {

// The operands, as DisentangledSelfAttention has them: q [B, n, L, d], k
// and v [B, n, L, d] (views: unit last stride, any other strides); the
// position tables' needed rows pos_key [n, R, d] (c2p) and pos_query
// [n, R, d] (p2c; pre-scaled), either undefined when the model lacks the
// term; ctx's geometry (the position row per distance, row_by_distance,
// which c2p reads at [i, j] and p2c at [j, i]) and key_bias.
struct CpuAttentionInputs {
  at::Tensor q, k, v;
  at::Tensor pos_key, pos_query;
};

// Whether CpuAttention takes these: the CPU backend fuses the attention in
// q's dtype (oneDNN makes its matmul), every operand on the CPU, q/k/v and
// the tables of one dtype (float32 or bfloat16), the
// shapes above with queries and keys of one length.
bool CpuAttentionApplies(const CpuAttentionInputs& in, const AttentionContext& ctx);

// The context vectors [B, L, n * d] float32: softmax(q k^T + c2p + p2c +
// key_bias) v per (sequence, head); the products in the operands' dtype
// with float32 results, the additions (in the op-by-op path's order:
// content, c2p, p2c, mask) and the softmax in float32. REQUIRES:
// CpuAttentionApplies. Throws c10::Error if oneDNN fails.
at::Tensor CpuAttention(const CpuAttentionInputs& in, const AttentionContext& ctx);

// Makes the oneDNN primitives CpuAttention would for these operands'
// shapes and strides (into oneDNN's cache) without running them: the
// operands' values are not read. REQUIRES: CpuAttentionApplies.
void PrepareCpuAttention(const CpuAttentionInputs& in, const AttentionContext& ctx);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_CPU_ATTENTION_H_
