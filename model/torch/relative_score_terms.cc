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

// The same where index[i][j] = i - j + offset: row i's c2p term is its
// c2p row read backwards from i + offset, and key j's p2c row read forwards
// from offset - j gives the p2c terms of every query i for that key; tiles
// of kTile x kTile are read that way and added transposed.
__attribute__((target_clones("avx512f", "avx2", "default"))) void AddAffineTerms(
    float* s, int64_t length, const float* c2p, int64_t c2p_stride, const float* p2c, int64_t p2c_stride,
    int64_t offset, const float* bias) {
  if (c2p != nullptr) {
    for (int64_t i = 0; i < length; ++i) {
      const float* c = c2p + i * c2p_stride + offset + i;  // c[-j] = c2p[i][i - j + offset].
      float* s_i = s + i * length;
      for (int64_t j = 0; j < length; ++j) s_i[j] += c[-j];
    }
  }
  constexpr int64_t kTile = 16;
  float tile[kTile][kTile];  // tile[jj][ii]: key j0 + jj's term for query i0 + ii.
  for (int64_t j0 = 0; j0 < length; j0 += kTile) {
    const int64_t keys = std::min(kTile, length - j0);
    for (int64_t i0 = 0; i0 < length; i0 += kTile) {
      const int64_t queries = std::min(kTile, length - i0);
      if (p2c != nullptr) {
        for (int64_t jj = 0; jj < keys; ++jj) {
          const int64_t j = j0 + jj;
          const float* row = p2c + j * p2c_stride + offset - j + i0;  // row[ii] = p2c[j][i - j + offset].
          for (int64_t ii = 0; ii < queries; ++ii) tile[jj][ii] = row[ii];
        }
      }
      for (int64_t ii = 0; ii < queries; ++ii) {
        float* s_i = s + (i0 + ii) * length + j0;
        if (p2c != nullptr) {
          for (int64_t jj = 0; jj < keys; ++jj) s_i[jj] = s_i[jj] + tile[jj][ii] + bias[j0 + jj];
        } else {
          for (int64_t jj = 0; jj < keys; ++jj) s_i[jj] += bias[j0 + jj];
        }
      }
    }
  }
}

}  // namespace

void AddRelativeScoreTerms(float* s, int64_t length, const float* c2p, int64_t c2p_stride, const float* p2c,
                           int64_t p2c_stride, const int64_t* index, int64_t index_offset, const float* bias) {
  if (index_offset >= 0) {
    AddAffineTerms(s, length, c2p, c2p_stride, p2c, p2c_stride, index_offset, bias);
  } else {
    AddTerms(s, length, c2p, c2p_stride, p2c, p2c_stride, index, bias);
  }
}

}  // namespace deberta::model
