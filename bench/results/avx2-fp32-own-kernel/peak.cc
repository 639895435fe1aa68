// The FMA units' float32 peak on this CPU: 12 independent chains of
// 8-wide FMAs per thread (more than latency x throughput = 8 needs).
//   g++ -O2 -mavx2 -mfma -fopenmp peak.cc -o peak && OMP_NUM_THREADS=2 ./peak
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <omp.h>
int main(){
  double total=0;
#pragma omp parallel reduction(+:total)
  { __m256 a[12]; for(int i=0;i<12;i++) a[i]=_mm256_set1_ps(i*0.001f); __m256 x=_mm256_set1_ps(0.9999f), y=_mm256_set1_ps(0.0001f);
    auto t=std::chrono::steady_clock::now(); long n=200000000;
    for(long i=0;i<n;i++){
#define F(j) a[j]=_mm256_fmadd_ps(a[j],x,y);
      F(0)F(1)F(2)F(3)F(4)F(5)F(6)F(7)F(8)F(9)F(10)F(11)
    }
    double s=std::chrono::duration<double>(std::chrono::steady_clock::now()-t).count();
    float o[8]; __m256 sum=a[0]; for(int i=1;i<12;i++) sum=_mm256_add_ps(sum,a[i]); _mm256_storeu_ps(o,sum); if(o[0]==42) printf("x");
    total += n*12.0*16/s/1e9; }
  printf("peak %.1f GFLOP/s\n", total);
}
