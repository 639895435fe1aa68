// What every attention layer of one forward pass reads, in two parts of
// different lifetimes: the relative-position geometry, which depends on the
// padded length alone (one per length; BucketGraph keeps its bucket's), and
// the batch's key padding, which depends on its mask. The rows a forward
// still computes are apart from both (model/torch/live_rows.h).
#ifndef DEBERTA_MODEL_TORCH_ATTENTION_CONTEXT_H_
#define DEBERTA_MODEL_TORCH_ATTENTION_CONTEXT_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

#include "model/config.h"

namespace deberta::model {

// Where each (query, key) pair of a length reads the relative table.
// Empty (num_rows 0, undefined indices) without relative attention.
struct RelativeGeometry {
  // Only the rows [first_row, first_row + num_rows) of the relative table
  // can occur at this length, so c2p/p2c multiply against that slice
  // (2L-1 rows at most) instead of all 2S rows.
  int64_t first_row = 0;
  int64_t num_rows = 0;
  at::Tensor c2p_index;  // [Lq, Lk] int64: [i][j] = row(i - j) - first_row.
  at::Tensor p2c_index;  // [Lk, Lq] int64: [j][i] = row(i - j) - first_row.
  // The same rows by distance, on the host, for CpuAttention (queries and
  // keys of one length L): [j - i + L - 1] = row(i - j) - first_row.
  std::vector<int32_t> row_by_distance;
  // Pairs closer than affine_reach (|i - j| < affine_reach; L or more:
  // every pair) have row(i - j) - first_row = i - j + affine_offset (v1
  // within its span, v2/v3 within their linear buckets): CpuAttention
  // reads their terms as contiguous slices, not gathered.
  int64_t affine_offset = 0;
  int64_t affine_reach = 0;
};

// The batch's padding, per row of the batch computed.
struct KeyPadding {
  at::Tensor mask;      // [B, L] float 0/1, 1 = real token.
  at::Tensor key_bias;  // [B, 1, 1, L] float: 0 for real keys, -1e30 for padding.

  // The rows `index` ([B'] int64 on the mask's device), in its order.
  KeyPadding Select(const at::Tensor& index) const;
  // The first `rows` rows.
  KeyPadding FirstRows(int64_t rows) const;
};

// What an attention layer reads: the geometry of the batch's length and
// the padding of the rows it computes.
struct AttentionContext {
  RelativeGeometry relative;
  KeyPadding padding;
};

// The gather indices for `length` on `device` (made on the host and
// copied, so not inside a device graph's capture).
RelativeGeometry MakeRelativeGeometry(const DebertaConfig& config, int64_t length, const c10::Device& device);

// The padding of a [B, L] 0/1 float mask (device work only, so it can be
// captured in a device graph).
KeyPadding MakeKeyPadding(const at::Tensor& mask);

// MakeRelativeGeometry for the mask's length and device, and MakeKeyPadding.
AttentionContext MakeAttentionContext(const DebertaConfig& config, const at::Tensor& mask);

// The context for queries at position 0 alone against keys at every
// position (the last layer under LastLayerPositions::kFirstOnly):
// c2p_index [1, L], p2c_index [L, 1], no rows by distance (CpuAttention
// does not apply); the rest as ctx.
AttentionContext FirstQueryContext(const AttentionContext& ctx);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_ATTENTION_CONTEXT_H_
