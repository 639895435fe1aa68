// oneDNN's dnnl_sgemm against OpenBLAS's cblas_sgemm at deberta-base's linear shapes
// (y[M,N] = x[M,K] * W[N,K]^T, W row-major [out, in] as the model stores it).
#include <oneapi/dnnl/dnnl.hpp>
#include <cblas.h>
#include <chrono>
#include <cstdio>
#include <vector>
static double Now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
template <class F> double Best(F f){ double best=1e9; for(int r=0;r<5;r++){ double t=Now(); int it=0; do{f(); it++;}while(Now()-t<0.3); best=std::min(best,(Now()-t)/it);} return best; }
int main(){
  int shapes[][3]={{128,768,2304},{128,768,768},{128,768,3072},{128,3072,768},{1024,768,3072},{1024,3072,768},{32,768,3072}};
  for(auto& s: shapes){ int M=s[0],K=s[1],N=s[2];
    std::vector<float> a(M*K,0.5f), w(N*K,0.25f), c(M*N);
    double td=Best([&]{ dnnl_sgemm('N','T',M,N,K,1.f,a.data(),K,w.data(),K,0.f,c.data(),N); });
    double tb=Best([&]{ cblas_sgemm(CblasRowMajor,CblasNoTrans,CblasTrans,M,N,K,1.f,a.data(),K,w.data(),K,0.f,c.data(),N); });
    double f=2.0*M*K*N/1e9;
    printf("%5dx%4dx%4d oneDNN %6.1f GFLOP/s  OpenBLAS %6.1f GFLOP/s  OpenBLAS/oneDNN %.2f\n",M,K,N,f/td,f/tb,td/tb);
  }
}
