// The disentangled attention's position terms and key mask added to one
// (sequence, head) score matrix in one pass: s[i][j] += c2p[i][c2p_index
// [i][j]] + p2c[j][p2c_index[j][i]] + key_bias[j], where p2c_index[j][i] =
// c2p_index[i][j] (both are row(i - j), see AttentionContext), so one
// index serves both. For CpuAttention; plain pointers, no tensors.
#ifndef DEBERTA_MODEL_TORCH_RELATIVE_SCORE_TERMS_H_
#define DEBERTA_MODEL_TORCH_RELATIVE_SCORE_TERMS_H_

#include <cstdint>

namespace deberta::model {

// s [length, length] row-major, in place, with the additions in the order
// the op-by-op path made them ((content + c2p) + p2c, then the mask).
// c2p and p2c: `length` rows each, `c2p_stride` / `p2c_stride` floats
// apart, null where the model lacks the term; index [length, length]
// row-major (unread when both are null); bias [length]. index_offset:
// AttentionContext::c2p_index_offset (>= 0: the index is i - j + offset,
// and is not read; the same sums, from contiguous reads).
void AddRelativeScoreTerms(float* s, int64_t length, const float* c2p, int64_t c2p_stride, const float* p2c,
                           int64_t p2c_stride, const int64_t* index, int64_t index_offset, const float* bias);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_RELATIVE_SCORE_TERMS_H_
