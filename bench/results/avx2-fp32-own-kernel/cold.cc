// dnnl_sgemm with the same weights every call (warm in L3) against 12
// layers' worth of distinct weights cycled (cold, as in a forward).
#include <oneapi/dnnl/dnnl.hpp>
#include <chrono>
#include <cstdio>
#include <vector>
static double Now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
int main(){
  int shapes[][3]={{128,768,2304},{128,768,768},{128,768,3072},{128,3072,768}};
  for (int round=0; round<2; ++round)
  for(auto& s: shapes){ int M=s[0],K=s[1],N=s[2]; const int L=12;
    std::vector<float> a((size_t)M*K,0.5f), c((size_t)M*N);
    std::vector<std::vector<float>> w(L, std::vector<float>((size_t)N*K,0.25f));
    double f=2.0*M*K*N/1e9; double best_warm=1e9, best_cold=1e9;
    for (int r=0;r<5;r++){
      double t=Now(); for(int i=0;i<L*4;i++) dnnl_sgemm('N','T',M,N,K,1.f,a.data(),K,w[0].data(),K,0.f,c.data(),N); best_warm=std::min(best_warm,(Now()-t)/(L*4));
      t=Now(); for(int i=0;i<L*4;i++) dnnl_sgemm('N','T',M,N,K,1.f,a.data(),K,w[i%L].data(),K,0.f,c.data(),N); best_cold=std::min(best_cold,(Now()-t)/(L*4));
    }
    printf("round %d %4dx%4dx%4d same weights %6.1f GFLOP/s  12 weights cycled %6.1f GFLOP/s  cold/warm %.2f\n",round+1,M,K,N,f/best_warm,f/best_cold,best_warm/best_cold);
  }
}
