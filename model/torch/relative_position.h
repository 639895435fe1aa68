// Relative positions of DeBERTa's disentangled attention (docs/deberta-model.md section 4):
// the log-bucket mapping with the reference's clamp, and the (query, key)
// table of bucketed distances. Pure functions on
// integers; no tensors.
#ifndef DEBERTA_MODEL_TORCH_RELATIVE_POSITION_H_
#define DEBERTA_MODEL_TORCH_RELATIVE_POSITION_H_

#include <cstdint>
#include <vector>

namespace deberta::model {

// Maps a relative distance r = i - j. `buckets` <= 0 returns r unchanged;
// otherwise r is clamped to +-(max_relative_positions - 1) and log-bucketed
// (docs/deberta-model.md section 4.2).
int64_t BucketRelativePosition(int64_t r, int64_t buckets, int64_t max_relative_positions);

// Row of the 2S-row relative table for distance r: clamp(bucket + S, 0, 2S-1).
int64_t RelativeTableRow(int64_t r, int64_t span, int64_t buckets,
                         int64_t max_relative_positions);

// The row-major [length][length] table of the (bucketed) relative
// positions of queries i and keys j of one sequence length. (The rows
// used for them: MakeRelativeGeometry.)
std::vector<int64_t> RelativePositionTable(int64_t length, int64_t buckets,
                                           int64_t max_relative_positions);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_RELATIVE_POSITION_H_
