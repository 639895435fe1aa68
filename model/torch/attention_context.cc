// The relative-position geometry of a length and the key padding of a batch.
#include "model/torch/attention_context.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "model/torch/relative_position.h"

namespace deberta::model {

RelativeGeometry MakeRelativeGeometry(const DebertaConfig& config, int64_t length, const c10::Device& device) {
  RelativeGeometry geometry;
  if (!config.relative_attention || length == 0) return geometry;
  // The row depends on i - j alone: one per distance, [j - i + L - 1].
  std::vector<int64_t> by_distance(2 * length - 1);
  for (int64_t k = 0; k < 2 * length - 1; ++k) {
    by_distance[k] = RelativeTableRow(length - 1 - k, config.RelativeSpan(), config.position_buckets,
                                      config.MaxRelativePositions());
  }
  const auto [min_it, max_it] = std::minmax_element(by_distance.begin(), by_distance.end());
  geometry.first_row = *min_it;
  geometry.num_rows = *max_it - *min_it + 1;
  for (int64_t& r : by_distance) r -= geometry.first_row;
  geometry.row_by_distance.assign(by_distance.begin(), by_distance.end());
  // Affine while both distances +-d keep to i - j + offset.
  const int64_t* at_zero = by_distance.data() + length - 1;  // at_zero[j - i].
  geometry.affine_offset = at_zero[0];
  int64_t reach = 1;
  while (reach < length && at_zero[-reach] == reach + geometry.affine_offset &&
         at_zero[reach] == -reach + geometry.affine_offset) {
    ++reach;
  }
  geometry.affine_reach = reach;
  at::Tensor c2p = at::empty({length, length}, at::kLong);
  int64_t* index = c2p.data_ptr<int64_t>();
  for (int64_t i = 0; i < length; ++i) {
    for (int64_t j = 0; j < length; ++j) index[i * length + j] = at_zero[j - i];
  }
  geometry.c2p_index = c2p.to(device);
  geometry.p2c_index = c2p.t().contiguous().to(device);
  return geometry;
}

KeyPadding MakeKeyPadding(const at::Tensor& mask) {
  const int64_t batch = mask.size(0), length = mask.size(1);
  // A large finite negative rather than -inf, so that a row with no real
  // key (a row padding a batch up to its bucket) gets uniform attention
  // over padding, not NaN.
  return {mask, ((1.0 - mask) * -1e30).view({batch, 1, 1, length})};
}

KeyPadding KeyPadding::Select(const at::Tensor& index) const {
  return {mask.index_select(0, index), key_bias.index_select(0, index)};
}

KeyPadding KeyPadding::FirstRows(int64_t rows) const {
  return {mask.narrow(0, 0, rows), key_bias.narrow(0, 0, rows)};
}

AttentionContext MakeAttentionContext(const DebertaConfig& config, const at::Tensor& mask) {
  return {MakeRelativeGeometry(config, mask.size(1), mask.device()), MakeKeyPadding(mask)};
}

AttentionContext FirstQueryContext(const AttentionContext& ctx) {
  AttentionContext first = ctx;
  RelativeGeometry& relative = first.relative;
  if (relative.c2p_index.defined()) relative.c2p_index = relative.c2p_index.narrow(0, 0, 1);
  if (relative.p2c_index.defined()) relative.p2c_index = relative.p2c_index.narrow(1, 0, 1).contiguous();
  relative.row_by_distance.clear();  // Queries and keys differ in length: CpuAttention does not apply.
  relative.affine_reach = 0;
  return first;
}

}  // namespace deberta::model
