// One pass over a score matrix for the position terms and the key mask:
// gathered where the rows are not affine in i - j (log buckets, clamped
// rows), contiguous reads where they are; with AVX2 in 8 x 8 register
// blocks, each one or the other.
#include "model/torch/relative_score_terms.h"

#include <algorithm>

#include "model/torch/cpu_backend.h"

namespace deberta::model {
namespace {

// The portable kernels (without AVX2; the project builds for the baseline
// x86-64): every pair's rows gathered, or where every pair is affine,
// AddAffineTerms.
void AddTerms(float* s, int64_t length, const float* c2p, int64_t c2p_stride, const float* p2c, int64_t p2c_stride,
              const int32_t* row_by_distance, const float* bias) {
  if (c2p != nullptr) {
    for (int64_t i = 0; i < length; ++i) {
      const float* c = c2p + i * c2p_stride;
      const int32_t* at_i = row_by_distance + length - 1 - i;
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
      const int32_t* at_i = row_by_distance + length - 1 - i;
      for (int64_t j = first; j < last; ++j) s_i[j] = s_i[j] + p2c[j * p2c_stride + at_i[j]] + bias[j];
    }
  }
}

// The same where every row is i - j + offset: row i's c2p term is its
// c2p row read backwards from i + offset, and key j's p2c row read forwards
// from offset - j gives the p2c terms of every query i for that key; tiles
// of kTile x kTile are read that way and added transposed.
void AddAffineTerms(float* s, int64_t length, const float* c2p, int64_t c2p_stride, const float* p2c,
                    int64_t p2c_stride, int64_t offset, const float* bias) {
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

#if defined(__x86_64__)
// r[0..7] (rows of an 8 x 8 block) replaced by the block's columns.
DEBERTA_TARGET_AVX2 void Transpose8x8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
    r[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
  }
}

// Block (i0, j0) of 8 x 8 where every pair is affine, in registers: key
// j's p2c terms for eight queries are eight contiguous floats
// (p2c[j][i - j + offset] for i = i0..i0+7), so eight keys' loads
// transposed give eight queries' terms; query i's c2p terms for eight keys
// are eight contiguous floats reversed.
DEBERTA_TARGET_AVX2 inline __attribute__((always_inline)) void AffineBlockAvx2(
    float* s, int64_t length, int64_t i0, int64_t j0, const float* c2p, int64_t c2p_stride, const float* p2c,
    int64_t p2c_stride, int64_t offset, const float* bias) {
  const __m256i reversed = _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0);
  __m256 p2c_terms[8];  // Loaded per key, then per query.
  if (p2c != nullptr) {
    for (int64_t jj = 0; jj < 8; ++jj) {
      const int64_t j = j0 + jj;
      p2c_terms[jj] = _mm256_loadu_ps(p2c + j * p2c_stride + offset - j + i0);
    }
    Transpose8x8(p2c_terms);
  }
  const __m256 key_bias = _mm256_loadu_ps(bias + j0);
  for (int64_t ii = 0; ii < 8; ++ii) {
    const int64_t i = i0 + ii;
    float* s_i = s + i * length + j0;
    __m256 sum = _mm256_loadu_ps(s_i);
    if (c2p != nullptr) {
      const __m256 c = _mm256_loadu_ps(c2p + i * c2p_stride + offset + i - j0 - 7);
      sum = _mm256_add_ps(sum, _mm256_permutevar8x32_ps(c, reversed));
    }
    if (p2c != nullptr) sum = _mm256_add_ps(sum, p2c_terms[ii]);
    _mm256_storeu_ps(s_i, _mm256_add_ps(sum, key_bias));
  }
}

// Block (i0, j0) of 8 x 8 with any rows: query i's rows for the block's
// eight keys are eight contiguous entries of the distance table, gathered
// from c2p's row i, and (offset by each key's row) from the keys' p2c rows.
DEBERTA_TARGET_AVX2 inline __attribute__((always_inline)) void GatheredBlockAvx2(
    float* s, int64_t length, int64_t i0, int64_t j0, const float* c2p, int64_t c2p_stride, const float* p2c,
    int64_t p2c_stride, const int32_t* row_by_distance, const float* bias) {
  const float* p2c_keys = p2c != nullptr ? p2c + j0 * p2c_stride : nullptr;
  const __m256i key_starts =
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(p2c_stride)));
  const __m256 key_bias = _mm256_loadu_ps(bias + j0);
  for (int64_t ii = 0; ii < 8; ++ii) {
    const int64_t i = i0 + ii;
    float* s_i = s + i * length + j0;
    const __m256i r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row_by_distance + length - 1 - i + j0));
    __m256 sum = _mm256_loadu_ps(s_i);
    if (c2p != nullptr) sum = _mm256_add_ps(sum, _mm256_i32gather_ps(c2p + i * c2p_stride, r, 4));
    if (p2c_keys != nullptr) {
      sum = _mm256_add_ps(sum, _mm256_i32gather_ps(p2c_keys, _mm256_add_epi32(r, key_starts), 4));
    }
    _mm256_storeu_ps(s_i, _mm256_add_ps(sum, key_bias));
  }
}

// The whole matrix in 8 x 8 blocks, each affine (every pair closer than
// the reach) or gathered; entries past the last whole block one by one.
DEBERTA_TARGET_AVX2 void AddTermsInBlocksAvx2(float* s, int64_t length, const float* c2p, int64_t c2p_stride,
                                              const float* p2c, int64_t p2c_stride, const RelativeRows& rows,
                                              const float* bias) {
  const int64_t whole = length / 8 * 8;
  for (int64_t i0 = 0; i0 < whole; i0 += 8) {
    for (int64_t j0 = 0; j0 < whole; j0 += 8) {
      const int64_t farthest = std::max(i0 - j0, j0 - i0) + 7;  // Largest |i - j| in the block.
      if (farthest < rows.affine_reach) {
        AffineBlockAvx2(s, length, i0, j0, c2p, c2p_stride, p2c, p2c_stride, rows.affine_offset, bias);
      } else {
        GatheredBlockAvx2(s, length, i0, j0, c2p, c2p_stride, p2c, p2c_stride, rows.row_by_distance, bias);
      }
    }
  }
  for (int64_t i = 0; i < length; ++i) {
    for (int64_t j = i < whole ? whole : 0; j < length; ++j) {
      const int64_t r = rows.row_by_distance[j - i + length - 1];
      float sum = s[i * length + j];
      if (c2p != nullptr) sum += c2p[i * c2p_stride + r];
      if (p2c != nullptr) sum += p2c[j * p2c_stride + r];
      s[i * length + j] = sum + bias[j];
    }
  }
}
#endif  // __x86_64__

}  // namespace

void AddRelativeScoreTerms(float* s, int64_t length, const float* c2p, int64_t c2p_stride, const float* p2c,
                           int64_t p2c_stride, const RelativeRows& rows, const float* bias) {
#if defined(__x86_64__)
  if (UseAvx2Kernels()) {
    AddTermsInBlocksAvx2(s, length, c2p, c2p_stride, p2c, p2c_stride, rows, bias);
    return;
  }
#endif
  if (rows.affine_reach >= length) {
    AddAffineTerms(s, length, c2p, c2p_stride, p2c, p2c_stride, rows.affine_offset, bias);
  } else {
    AddTerms(s, length, c2p, c2p_stride, p2c, p2c_stride, rows.row_by_distance, bias);
  }
}

}  // namespace deberta::model
