// AttentionContext: what every attention layer of one forward pass shares:
// the key mask as an additive bias and the relative-position gather indices
// for the padded length of the batch.
#ifndef DEBERTA_MODEL_TORCH_ATTENTION_CONTEXT_H_
#define DEBERTA_MODEL_TORCH_ATTENTION_CONTEXT_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <vector>

#include "model/config.h"

namespace deberta::model {

// Thrown between layers when no row of the batch is wanted any more; the
// engine answers Cancelled.
struct BatchStopped : std::runtime_error {
  BatchStopped() : std::runtime_error("stopped: every caller of the batch has gone") {}
};

struct AttentionContext {
  at::Tensor mask;       // [B, L] float 0/1, 1 = real token.
  at::Tensor key_bias;   // [B, 1, 1, L] float: 0 for real keys, -1e30 for padding.
  // Only the rows [first_row, first_row + num_rows) of the relative table
  // can occur at this length, so c2p/p2c multiply against that slice
  // (2L-1 rows at most) instead of all 2S rows.
  int64_t first_row = 0;
  int64_t num_rows = 0;
  at::Tensor c2p_index;  // [L, L] int64: [i][j] = row(i - j) - first_row.
  at::Tensor p2c_index;  // [L, L] int64: [j][i] = row(i - j) - first_row.
  // When c2p_index[i][j] = i - j + offset everywhere (v1 within its span,
  // v2/v3 within their linear buckets), that offset, else -1: the position
  // terms are then contiguous slices, no gathers (CpuAttention).
  int64_t c2p_index_offset = -1;
  // The input rows the forward still computes, in order: row i of every
  // [B', ...] tensor is input row rows[i]. Starts as 0..B-1.
  std::vector<int64_t> rows;
  // Which input rows are still wanted (see Engine::RowsWanted; null: all,
  // always). Asked between layers by DropUnwantedRows.
  const std::function<std::vector<bool>()>* rows_wanted = nullptr;
};

// Builds the context for a [B, L] 0/1 float mask on the mask's device:
// MakeRelativeContext for L, then SetAttentionMask.
AttentionContext MakeAttentionContext(const DebertaConfig& config, const at::Tensor& mask);

// The part that depends only on the length: the relative-position gather
// indices on `device` (made on the host and copied, so not inside a device
// graph's capture). mask, key_bias and rows are left empty.
AttentionContext MakeRelativeContext(const DebertaConfig& config, int64_t length, const c10::Device& device);
// The part that depends on the batch's mask: mask, key_bias and rows
// 0..B-1 (device work only, so it can be captured in a device graph).
void SetAttentionMask(AttentionContext* ctx, const at::Tensor& mask);

// The context for queries at position 0 alone against keys at every
// position (the last layer under LastLayerPositions::kFirstOnly):
// c2p_index [1, L], p2c_index [L, 1], no affine offset; the rest as ctx.
AttentionContext FirstQueryContext(const AttentionContext& ctx);

// Asks ctx->rows_wanted (if set) and removes the rows no longer wanted from
// the context and from each of `per_row` (tensors whose first dimension is
// the context's rows), so that later layers compute only wanted rows.
// Throws BatchStopped when none is left.
void DropUnwantedRows(AttentionContext* ctx, const std::vector<at::Tensor*>& per_row);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_ATTENTION_CONTEXT_H_
