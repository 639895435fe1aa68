// Row softmax: AVX2 + FMA where the CPU has them (picked at run time; the
// project builds for baseline x86-64), plain C++ otherwise. The AVX2 exp
// is Cephes' single-precision one (range reduction by ln 2 in two parts,
// degree-5 polynomial): within 2 ulp, as close as at::softmax's.
#include "model/torch/row_softmax.h"

#include <algorithm>
#include <cmath>

#include <c10/util/BFloat16.h>

#include "model/torch/cpu_backend.h"

namespace deberta::model {
namespace {

// LibTorch's own float32 -> bfloat16 rounding (to nearest even).
uint16_t ToBFloat16Bits(float value) { return c10::BFloat16(value).x; }

// exp(s - max) in place for each entry, their sum returned.
float ExpShiftedScalar(float* s, int64_t length, float max) {
  float sum = 0.0f;
  for (int64_t j = 0; j < length; ++j) {
    s[j] = std::exp(s[j] - max);
    sum += s[j];
  }
  return sum;
}

void SoftmaxRowScalar(float* s, int64_t length, uint16_t* out) {
  const float max = *std::max_element(s, s + length);
  const float scale = 1.0f / ExpShiftedScalar(s, length, max);
  for (int64_t j = 0; j < length; ++j) {
    if (out != nullptr) {
      out[j] = ToBFloat16Bits(s[j] * scale);
    } else {
      s[j] *= scale;
    }
  }
}

#if defined(__x86_64__)
DEBERTA_TARGET_AVX2 float HorizontalMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

DEBERTA_TARGET_AVX2 float HorizontalSum(__m256 v) {
  __m128 m = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_add_ps(m, _mm_movehl_ps(m, m));
  m = _mm_add_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// exp(x) for x <= 0; below -87.3 (2^-126 and under) it is 0.
DEBERTA_TARGET_AVX2 __m256 ExpOfNonPositive(__m256 x) {
  const __m256 lowest = _mm256_set1_ps(-87.3f);
  const __m256 underflow = _mm256_cmp_ps(x, lowest, _CMP_LT_OQ);
  x = _mm256_max_ps(x, lowest);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);  // x - n ln 2, ln 2 in two parts.
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(p, _mm256_castsi256_ps(exponent)));
}

DEBERTA_TARGET_AVX2 __m128i ToBFloat16Bits(__m256 v) {
  __m256i bits = _mm256_castps_si256(v);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  bits = _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))), 16);
  return _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
}

DEBERTA_TARGET_AVX2 void SoftmaxRowAvx2(float* s, int64_t length, uint16_t* out) {
  const int64_t vectors = length / 8 * 8;
  float max = -INFINITY;
  if (vectors > 0) {
    __m256 m = _mm256_loadu_ps(s);
    for (int64_t j = 8; j < vectors; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(s + j));
    max = HorizontalMax(m);
  }
  for (int64_t j = vectors; j < length; ++j) max = std::max(max, s[j]);
  const __m256 shift = _mm256_set1_ps(max);
  __m256 sums = _mm256_setzero_ps();
  for (int64_t j = 0; j < vectors; j += 8) {
    const __m256 e = ExpOfNonPositive(_mm256_sub_ps(_mm256_loadu_ps(s + j), shift));
    _mm256_storeu_ps(s + j, e);
    sums = _mm256_add_ps(sums, e);
  }
  const float sum = HorizontalSum(sums) + ExpShiftedScalar(s + vectors, length - vectors, max);
  const float scale = 1.0f / sum;
  const __m256 scales = _mm256_set1_ps(scale);
  for (int64_t j = 0; j < vectors; j += 8) {
    const __m256 p = _mm256_mul_ps(_mm256_loadu_ps(s + j), scales);
    if (out != nullptr) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), ToBFloat16Bits(p));
    } else {
      _mm256_storeu_ps(s + j, p);
    }
  }
  for (int64_t j = vectors; j < length; ++j) {
    if (out != nullptr) {
      out[j] = ToBFloat16Bits(s[j] * scale);
    } else {
      s[j] *= scale;
    }
  }
}
#endif  // __x86_64__

void SoftmaxRows(float* s, int64_t rows, int64_t length, uint16_t* out) {
  if (length == 0) return;
  const bool avx2 = UseAvx2Kernels();
  for (int64_t i = 0; i < rows; ++i) {
    uint16_t* out_i = out != nullptr ? out + i * length : nullptr;
#if defined(__x86_64__)
    if (avx2) {
      SoftmaxRowAvx2(s + i * length, length, out_i);
      continue;
    }
#endif
    SoftmaxRowScalar(s + i * length, length, out_i);
  }
}

}  // namespace

void SoftmaxRowsInPlace(float* s, int64_t rows, int64_t length) { SoftmaxRows(s, rows, length, nullptr); }

void SoftmaxRowsToBFloat16(float* s, int64_t rows, int64_t length, uint16_t* out) {
  SoftmaxRows(s, rows, length, out);
}

}  // namespace deberta::model
