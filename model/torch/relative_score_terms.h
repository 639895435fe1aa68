// The disentangled attention's position terms and key mask added to the
// content scores in one pass on the CPU: scores[b,h,i,j] += c2p[b,h,i,
// c2p_index[i,j]] + p2c[b,h,j,p2c_index[j,i]] + key_bias[b,j], where
// p2c_index[j][i] = c2p_index[i][j] (both are row(i - j), see
// AttentionContext), so only c2p_index is passed. Replaces
// two gathers, a transpose and three additions, each its own pass over the
// [B, n, L, L] scores and its own parallel region (at 1 x 128 in float32
// they took 6.4 of 85 ms, bench/op_profile).
#ifndef DEBERTA_MODEL_TORCH_RELATIVE_SCORE_TERMS_H_
#define DEBERTA_MODEL_TORCH_RELATIVE_SCORE_TERMS_H_

#include <ATen/core/Tensor.h>

namespace deberta::model {

// Whether AddRelativeScoreTerms takes these: CPU tensors; scores float32
// contiguous [B, n, L, L]; c2p and p2c (either may be undefined: the model
// lacks the term) [B, n, L, R] float32 or bfloat16, unit last stride;
// c2p_index int64 contiguous [L, L]; key_bias float32 [B, 1, 1, L].
bool RelativeScoreTermsApply(const at::Tensor& scores, const at::Tensor& c2p, const at::Tensor& p2c,
                             const at::Tensor& c2p_index, const at::Tensor& key_bias);

// In place on scores, with the additions in the order the separate
// operations made them (content, c2p, p2c, mask), so results are unchanged.
// REQUIRES: RelativeScoreTermsApply(...).
void AddRelativeScoreTerms(at::Tensor& scores, const at::Tensor& c2p, const at::Tensor& p2c,
                           const at::Tensor& c2p_index, const at::Tensor& key_bias);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_RELATIVE_SCORE_TERMS_H_
