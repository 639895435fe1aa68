// Construction of the per-forward attention context.
#include "model/torch/attention_context.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "model/torch/relative_position.h"

namespace deberta::model {

AttentionContext MakeAttentionContext(const DebertaConfig& config, const at::Tensor& mask) {
  AttentionContext ctx = MakeRelativeContext(config, mask.size(1), mask.device());
  SetAttentionMask(&ctx, mask);
  return ctx;
}

AttentionContext MakeRelativeContext(const DebertaConfig& config, int64_t length, const c10::Device& device) {
  AttentionContext ctx;
  if (!config.relative_attention) return ctx;
  std::vector<int64_t> rows =
      RelativeRowTable(length, config.RelativeSpan(), config.position_buckets,
                       config.MaxRelativePositions());
  const auto [min_it, max_it] = std::minmax_element(rows.begin(), rows.end());
  ctx.first_row = *min_it;
  ctx.num_rows = *max_it - *min_it + 1;
  for (int64_t& r : rows) r -= ctx.first_row;
  ctx.c2p_index_offset = rows[0];  // [0][0]: i - j = 0.
  for (int64_t i = 0; i < length && ctx.c2p_index_offset >= 0; ++i) {
    for (int64_t j = 0; j < length; ++j) {
      if (rows[i * length + j] != i - j + ctx.c2p_index_offset) {
        ctx.c2p_index_offset = -1;
        break;
      }
    }
  }
  at::Tensor c2p = at::from_blob(rows.data(), {length, length}, at::kLong).clone();
  ctx.c2p_index = c2p.to(device);
  ctx.p2c_index = c2p.t().contiguous().to(device);
  return ctx;
}

void SetAttentionMask(AttentionContext* ctx, const at::Tensor& mask) {
  const int64_t batch = mask.size(0), length = mask.size(1);
  ctx->mask = mask;
  ctx->rows.resize(batch);
  for (int64_t b = 0; b < batch; ++b) ctx->rows[b] = b;
  // A large finite negative rather than -inf, so that a row with no real
  // key (a row padding a batch up to its bucket) gets uniform attention
  // over padding, not NaN.
  ctx->key_bias = ((1.0 - mask) * -1e30).view({batch, 1, 1, length});
}

AttentionContext FirstQueryContext(const AttentionContext& ctx) {
  AttentionContext first = ctx;
  if (ctx.c2p_index.defined()) first.c2p_index = ctx.c2p_index.narrow(0, 0, 1);
  if (ctx.p2c_index.defined()) first.p2c_index = ctx.p2c_index.narrow(1, 0, 1).contiguous();
  first.c2p_index_offset = -1;  // Queries and keys differ in length: CpuAttention does not apply.
  return first;
}

void DropUnwantedRows(AttentionContext* ctx, const std::vector<at::Tensor*>& per_row) {
  if (ctx->rows_wanted == nullptr) return;
  const std::vector<bool> wanted = (*ctx->rows_wanted)();
  std::vector<int64_t> kept_rows, kept_index;  // Input rows; their current index.
  for (size_t i = 0; i < ctx->rows.size(); ++i) {
    const auto row = static_cast<size_t>(ctx->rows[i]);
    // Rows past the callers' (padding a batch up to its bucket) are never
    // wanted once anyone asks.
    if (row < wanted.size() && wanted[row]) {
      kept_rows.push_back(ctx->rows[i]);
      kept_index.push_back(static_cast<int64_t>(i));
    }
  }
  if (kept_rows.empty()) throw BatchStopped();
  if (kept_rows.size() == ctx->rows.size()) return;
  const at::Tensor index =
      at::from_blob(kept_index.data(), {static_cast<int64_t>(kept_index.size())}, at::kLong)
          .to(ctx->mask.device());
  ctx->mask = ctx->mask.index_select(0, index);
  ctx->key_bias = ctx->key_bias.index_select(0, index);
  for (at::Tensor* t : per_row) {
    if (t->defined()) *t = t->index_select(0, index);
  }
  ctx->rows = std::move(kept_rows);
}

}  // namespace deberta::model
