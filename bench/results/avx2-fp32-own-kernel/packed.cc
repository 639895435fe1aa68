// A float32 kernel of our own on weights packed at load, against oneDNN's
// dnnl_sgemm (what the model's float32 linear layers call on an AVX2 CPU),
// at deberta-base's linear shapes: y[M,N] = x[M,K] W[N,K]^T + bias.
// Weights packed once into 16-column panels, k-major ([N/16][K][16]); x
// packed per block of MC rows x KC columns into 6-row panels; a 6 x 16
// AVX2 FMA micro-kernel (12 accumulators in registers); the panels shared
// out between the OpenMP threads. Micro (x read in place) is the first
// version's kernel, kept for reference; Gemm runs MicroP.
//   g++ -O3 -mavx2 -mfma -fopenmp -std=c++17 packed.cc -o packed -ldnnl
//   OMP_NUM_THREADS=2 ./packed [KC=384] [MC=96]
#include <immintrin.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
static double Now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
template <class F> double Best(F f){ double best=1e9; for(int r=0;r<5;r++){ double t=Now(); int it=0; do{f(); it++;}while(Now()-t<0.3); best=std::min(best,(Now()-t)/it);} return best; }

constexpr int NR = 16;
int KC = 384;

// W [N,K] row-major -> [N/16][K][16]
std::vector<float, std::allocator<float>> Pack(const float* w, int N, int K) {
  std::vector<float> p((size_t)N * K);
  for (int np = 0; np < N / NR; ++np)
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < NR; ++j) p[((size_t)np * K + k) * NR + j] = w[(size_t)(np * NR + j) * K + k];
  return p;
}

#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
template <int R>
static inline void Micro(int kc, const float* a, int lda, const float* b, float* c, int ldc, bool first, const float* bias) {
  __m256 z = _mm256_setzero_ps();
#define DECL(r) __m256 c##r##0 = z, c##r##1 = z;
  ROWS(DECL)
#define INIT(r) if constexpr (r < R) { if (!first) { c##r##0 = _mm256_loadu_ps(c + r * ldc); c##r##1 = _mm256_loadu_ps(c + r * ldc + 8); } else if (bias) { c##r##0 = _mm256_loadu_ps(bias); c##r##1 = _mm256_loadu_ps(bias + 8); } }
  ROWS(INIT)
  const float* a1 = a + lda; const float* a2 = a + 2 * lda; const float* a3 = a + 3 * lda; const float* a4 = a + 4 * lda; const float* a5 = a + 5 * lda;
  const float* a0 = a;
  for (int k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
    b += NR;
    __m256 av;
#define STEP(r) if constexpr (r < R) { av = _mm256_broadcast_ss(a##r + k); c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0); c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1); }
    ROWS(STEP)
  }
#define STORE(r) if constexpr (r < R) { _mm256_storeu_ps(c + r * ldc, c##r##0); _mm256_storeu_ps(c + r * ldc + 8, c##r##1); }
  ROWS(STORE)
}

int MC = 96;
// A packed per 6-row panel, k-major: ap[k*6 + r].
static void PackA(int rows, int kc, const float* a, int lda, float* ap) {
  for (int k = 0; k < kc; ++k)
    for (int r = 0; r < 6; ++r) ap[k * 6 + r] = r < rows ? a[r * lda + k] : 0.f;
}
static inline void MicroP(int kc, const float* ap, const float* b, float* c, int ldc, bool first, const float* bias, int rows) {
  __m256 z = _mm256_setzero_ps();
  ROWS(DECL)
  if (rows == 6) {
    const int R = 6;
    ROWS(INIT)
  } else {
    for (int r = 0; r < rows; ++r) {}  // handled below via temp
  }
  float tmp[6 * 16];
  if (rows != 6) {
    for (int r = 0; r < 6; ++r) for (int j = 0; j < 16; ++j) tmp[r * 16 + j] = r < rows ? (first ? (bias ? bias[j] : 0.f) : c[r * ldc + j]) : 0.f;
#define INITT(r) c##r##0 = _mm256_loadu_ps(tmp + r * 16); c##r##1 = _mm256_loadu_ps(tmp + r * 16 + 8);
    ROWS(INITT)
  }
  for (int k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
    b += NR;
    __m256 av;
#define STEPP(r) av = _mm256_broadcast_ss(ap + r); c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0); c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);
    ROWS(STEPP)
    ap += 6;
  }
  if (rows == 6) {
    const int R = 6;
    ROWS(STORE)
  } else {
#define STORET(r) _mm256_storeu_ps(tmp + r * 16, c##r##0); _mm256_storeu_ps(tmp + r * 16 + 8, c##r##1);
    ROWS(STORET)
    for (int r = 0; r < rows; ++r) for (int j = 0; j < 16; ++j) c[r * ldc + j] = tmp[r * 16 + j];
  }
}

void Gemm(int M, int N, int K, const float* a, const float* bp, const float* bias, float* c) {
  const int panels = N / NR;
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int p0 = panels * t / nt, p1 = panels * (t + 1) / nt;
    static thread_local std::vector<float> ap;
    ap.resize((size_t)(MC + 6) * KC);
    for (int m0 = 0; m0 < M; m0 += MC) {
      const int mc = std::min(MC, M - m0);
      for (int k0 = 0; k0 < K; k0 += KC) {
        const int kc = std::min(KC, K - k0);
        for (int m = 0; m < mc; m += 6) PackA(std::min(6, mc - m), kc, a + (size_t)(m0 + m) * K + k0, K, ap.data() + (size_t)m * kc);
        for (int p = p0; p < p1; ++p) {
          const float* b = bp + ((size_t)p * K + k0) * NR;
          const float* bb = bias ? bias + p * NR : nullptr;
          for (int m = 0; m < mc; m += 6)
            MicroP(kc, ap.data() + (size_t)m * kc, b, c + (size_t)(m0 + m) * N + p * NR, N, k0 == 0, bb, std::min(6, mc - m));
        }
      }
    }
  }
}

int main(int argc, char** argv) {
  if (argc > 1) KC = atoi(argv[1]); if (argc > 2) MC = atoi(argv[2]);
  int shapes[][3]={{128,768,2304},{128,768,768},{128,768,3072},{128,3072,768},{1024,768,3072},{1024,3072,768},{32,768,3072},{512,768,768},{2048,768,2304},{2048,3072,768},{1,768,768}};
  for(auto& s: shapes){ int M=s[0],K=s[1],N=s[2];
    std::vector<float> a(M*K), w(N*K), bias(N), c(M*N), c2(M*N);
    for (auto& x : a) x = (rand() % 1000) / 1000.f - 0.5f;
    for (auto& x : w) x = (rand() % 1000) / 1000.f - 0.5f;
    for (auto& x : bias) x = (rand() % 1000) / 1000.f - 0.5f;
    auto bp = Pack(w.data(), N, K);
    double td=Best([&]{ for (int i=0;i<M;i++) memcpy(&c[(size_t)i*N], bias.data(), N*4); dnnl_sgemm('N','T',M,N,K,1.f,a.data(),K,w.data(),K,1.f,c.data(),N); });
    double tp=Best([&]{ Gemm(M,N,K,a.data(),bp.data(),bias.data(),c2.data()); });
    double err=0; for (size_t i=0;i<c.size();i++) err=std::max(err,(double)std::fabs(c[i]-c2[i]));
    double f=2.0*M*K*N/1e9;
    printf("%5dx%4dx%4d oneDNN %6.1f  packed %6.1f GFLOP/s  packed/oneDNN %.2f  maxdiff %.2g\n",M,K,N,f/td,f/tp,td/tp,err);
  }
}
