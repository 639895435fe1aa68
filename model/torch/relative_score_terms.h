// The disentangled attention's position terms and key mask added to one
// (sequence, head) score matrix in one pass: s[i][j] += c2p[i][r] +
// p2c[j][r] + key_bias[j], r the relative table's row for query i and key
// j (c2p_index[i][j] = p2c_index[j][i], see AttentionContext). The row
// depends on i - j alone, so it is read from a table of 2L - 1 rows, one
// per distance, not from an L x L index. For CpuAttention; plain pointers,
// no tensors.
#ifndef DEBERTA_MODEL_TORCH_RELATIVE_SCORE_TERMS_H_
#define DEBERTA_MODEL_TORCH_RELATIVE_SCORE_TERMS_H_

#include <cstdint>

namespace deberta::model {

// Where the pairs (i, j) of one length read the position terms.
struct RelativeRows {
  // [2 length - 1]: row_by_distance[j - i + length - 1] is (i, j)'s row,
  // so query i's rows for keys 0, 1, ... are contiguous from
  // row_by_distance + length - 1 - i.
  const int32_t* row_by_distance = nullptr;
  // Pairs closer than affine_reach (|i - j| < affine_reach) read row
  // i - j + affine_offset: the linear part of the buckets (v2/v3's middle
  // 2 x 128, all of v1's span). affine_reach >= length: every pair.
  int64_t affine_offset = 0;
  int64_t affine_reach = 0;
};

// s [length, length] row-major, in place, with the additions in the order
// the op-by-op path made them ((content + c2p) + p2c, then the mask).
// c2p and p2c: `length` rows each, `c2p_stride` / `p2c_stride` floats
// apart, null where the model lacks the term; `rows` unread when both are
// null; bias [length]. Affine pairs are read as contiguous slices, the
// others gathered.
void AddRelativeScoreTerms(float* s, int64_t length, const float* c2p, int64_t c2p_stride, const float* p2c,
                           int64_t p2c_stride, const RelativeRows& rows, const float* bias);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_RELATIVE_SCORE_TERMS_H_
