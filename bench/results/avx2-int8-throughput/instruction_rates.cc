#include <immintrin.h>
#include <chrono>
#include <cstdio>
static double Now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
#define R12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
int main(){
  const long N=100000000;
  { __m256 b=_mm256_set1_ps(0.9999999f), c=_mm256_set1_ps(1e-9f);
#define D(i) __m256 a##i=_mm256_set1_ps(1.0f+i*1e-7f);
    R12(D)
    double t=Now();
    for(long n=0;n<N;n++){
#define F(i) a##i=_mm256_fmadd_ps(a##i,b,c);
      R12(F)
    }
    t=Now()-t;
#define S(i) +a##i[0]
    printf("fma: %.2f G/s %.1f GMAC/s %f\n",12.0*N/t/1e9,96.0*N/t/1e9, 0 R12(S));
  }
  { __m256i w=_mm256_set1_epi16(3), x=_mm256_set1_epi16(7);
#define DI(i) __m256i c##i=_mm256_set1_epi32(i);
    R12(DI)
    double t=Now();
    for(long n=0;n<N;n++){
      asm volatile("":"+x"(x));
#define M(i) c##i=_mm256_add_epi32(c##i,_mm256_madd_epi16(x,w));
      R12(M)
    }
    t=Now()-t;
#define SI(i) +_mm256_extract_epi32(c##i,0)
    printf("pmaddwd: %.2f G/s %.1f GMAC/s %d\n",12.0*N/t/1e9,192.0*N/t/1e9, 0 R12(SI));
  }
  { __m256i w=_mm256_set1_epi8(3), x=_mm256_set1_epi8(7), one=_mm256_set1_epi16(1);
    R12(DI)
    double t=Now();
    for(long n=0;n<N;n++){
      asm volatile("":"+x"(x));
#define U(i) c##i=_mm256_add_epi32(c##i,_mm256_madd_epi16(_mm256_maddubs_epi16(x,w),one));
      R12(U)
    }
    t=Now()-t;
    printf("pmaddubsw chain: %.2f G/s %.1f GMAC/s %d\n",12.0*N/t/1e9,384.0*N/t/1e9, 0 R12(SI));
  }
}
