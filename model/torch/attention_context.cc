// Construction of the per-forward attention context.
#include "model/torch/attention_context.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "model/torch/relative_position.h"

namespace deberta::model {

AttentionContext MakeAttentionContext(const DebertaConfig& config, const at::Tensor& mask) {
  AttentionContext ctx;
  const int64_t batch = mask.size(0), length = mask.size(1);
  ctx.mask = mask;
  // A large finite negative rather than -inf: a padded query row (all keys
  // of a padded row are real, but a fully padded row cannot occur for real
  // queries) never produces NaN.
  ctx.key_bias = ((1.0 - mask) * -1e30).view({batch, 1, 1, length});
  if (!config.relative_attention) return ctx;

  std::vector<int64_t> rows =
      RelativeRowTable(length, config.RelativeSpan(), config.position_buckets,
                       config.MaxRelativePositions());
  const auto [min_it, max_it] = std::minmax_element(rows.begin(), rows.end());
  ctx.first_row = *min_it;
  ctx.num_rows = *max_it - *min_it + 1;
  for (int64_t& r : rows) r -= ctx.first_row;
  at::Tensor c2p = at::from_blob(rows.data(), {length, length}, at::kLong).clone();
  ctx.c2p_index = c2p.to(mask.device());
  ctx.p2c_index = c2p.t().contiguous().to(mask.device());
  return ctx;
}

}  // namespace deberta::model
