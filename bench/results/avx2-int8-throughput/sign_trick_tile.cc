#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <vector>
static double Now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
// 4 rows x 3 panels of 8 columns; K groups of 4 bytes. Data in L1.
__attribute__((noinline)) void Kernel(const int8_t* a, const int8_t* w, int groups, int32_t* c) {
  __m256i acc[4][3] = {};
  const __m256i one = _mm256_set1_epi16(1);
  for (int g = 0; g < groups; ++g) {
    __m256i w0 = _mm256_load_si256((const __m256i*)(w + g * 96));
    __m256i w1 = _mm256_load_si256((const __m256i*)(w + g * 96 + 32));
    __m256i w2 = _mm256_load_si256((const __m256i*)(w + g * 96 + 64));
    for (int r = 0; r < 4; ++r) {
      __m256i ar = _mm256_set1_epi32(*(const int32_t*)(a + r * 4096 + g * 4));
      __m256i ua = _mm256_abs_epi8(ar);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(ua, _mm256_sign_epi8(w0, ar)), one));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(ua, _mm256_sign_epi8(w1, ar)), one));
      acc[r][2] = _mm256_add_epi32(acc[r][2], _mm256_madd_epi16(_mm256_maddubs_epi16(ua, _mm256_sign_epi8(w2, ar)), one));
    }
  }
  for (int r = 0; r < 4; ++r) for (int p = 0; p < 3; ++p) _mm256_storeu_si256((__m256i*)(c + r * 24 + p * 8), acc[r][p]);
}
int main() {
  const int K = 768, groups = K / 4;
  alignas(64) static int8_t a[4 * 4096], w[96 * 1024];
  for (int i = 0; i < 4 * 4096; ++i) a[i] = (i * 7) % 255 - 127;
  for (int i = 0; i < 96 * 1024; ++i) w[i] = (i * 13) % 255 - 127;
  int32_t c[96];
  const long reps = 200000;
  double t = Now();
  for (long i = 0; i < reps; ++i) { Kernel(a, w, groups, c); asm volatile("" ::: "memory"); }
  t = Now() - t;
  printf("sign trick 4x24 tile: %.1f GMAC/s (c0 %d)\n", 4.0 * 24 * K * reps / t / 1e9, c[0]);
}
