// Log-bucketed relative positions, as the reference computes them.
#include "model/torch/relative_position.h"

#include <algorithm>
#include <cmath>

namespace deberta::model {

int64_t BucketRelativePosition(int64_t r, int64_t buckets, int64_t max_relative_positions) {
  if (buckets <= 0) return r;
  const int64_t max_distance = max_relative_positions - 1;
  // The reference (2023-03 and later) clamps before bucketing; Hugging Face
  // does not, which differs for keys far to the right of the query.
  r = std::clamp(r, -max_distance, max_distance);
  const int64_t mid = buckets / 2;
  const int64_t abs_r = r < 0 ? -r : r;
  if (abs_r <= mid) return r;
  // Double precision gives the reference's float32 table for every
  // configuration checked (docs/deberta-model.md section 4.2).
  const double log_ratio = std::log(static_cast<double>(abs_r) / mid) /
                           std::log(static_cast<double>(max_distance) / mid);
  const int64_t bucket = static_cast<int64_t>(std::ceil(log_ratio * (mid - 1))) + mid;
  return r < 0 ? -bucket : bucket;
}

int64_t RelativeTableRow(int64_t r, int64_t span, int64_t buckets,
                         int64_t max_relative_positions) {
  return std::clamp<int64_t>(BucketRelativePosition(r, buckets, max_relative_positions) + span, 0,
                             2 * span - 1);
}

std::vector<int64_t> RelativePositionTable(int64_t length, int64_t buckets,
                                           int64_t max_relative_positions) {
  std::vector<int64_t> table(length * length);
  for (int64_t i = 0; i < length; ++i) {
    for (int64_t j = 0; j < length; ++j) {
      table[i * length + j] = BucketRelativePosition(i - j, buckets, max_relative_positions);
    }
  }
  return table;
}

}  // namespace deberta::model
