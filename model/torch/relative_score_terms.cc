// One pass over a score matrix for the position terms and the key mask.
#include "model/torch/relative_score_terms.h"

#include <algorithm>

namespace deberta::model {
namespace {

// Compiled for AVX-512, AVX2 and the baseline, picked at load time (the
// project builds for the baseline x86-64): the gathers vectorize.
__attribute__((target_clones("avx512f", "avx2", "default"))) void AddTerms(float* s, int64_t length,
                                                                           const float* c2p, int64_t c2p_stride,
                                                                           const float* p2c, int64_t p2c_stride,
                                                                           const int64_t* index,
                                                                           const float* bias) {
  if (c2p != nullptr) {
    for (int64_t i = 0; i < length; ++i) {
      const float* c = c2p + i * c2p_stride;
      const int64_t* at_i = index + i * length;
      float* s_i = s + i * length;
      for (int64_t j = 0; j < length; ++j) s_i[j] += c[at_i[j]];
    }
  }
  if (p2c == nullptr) {
    for (int64_t i = 0; i < length; ++i) {
      float* s_i = s + i * length;
      for (int64_t j = 0; j < length; ++j) s_i[j] += bias[j];
    }
    return;
  }
  // p2c is read down its columns (key j's row, for query i): in tiles of
  // kTile keys, so each query's writes fill whole cache lines and the
  // tile's p2c rows stay in cache from one query to the next.
  constexpr int64_t kTile = 16;
  for (int64_t first = 0; first < length; first += kTile) {
    const int64_t last = std::min(length, first + kTile);
    for (int64_t i = 0; i < length; ++i) {
      float* s_i = s + i * length;
      const int64_t* at_i = index + i * length;
      for (int64_t j = first; j < last; ++j) s_i[j] = s_i[j] + p2c[j * p2c_stride + at_i[j]] + bias[j];
    }
  }
}

}  // namespace

void AddRelativeScoreTerms(float* s, int64_t length, const float* c2p, int64_t c2p_stride, const float* p2c,
                           int64_t p2c_stride, const int64_t* index, const float* bias) {
  AddTerms(s, length, c2p, c2p_stride, p2c, p2c_stride, index, bias);
}

}  // namespace deberta::model
