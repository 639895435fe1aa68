// oneDNN's matmul primitive with the bias and GELU fused (plain weights, the
// transposed view of W[N,K]) against what the model does on AVX2 now:
// bias copied into C, dnnl_sgemm with beta 1, then GELU in its own pass.
#include <oneapi/dnnl/dnnl.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
using namespace dnnl;
static double Now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
template <class F> double Best(F f){ double best=1e9; for(int r=0;r<5;r++){ double t=Now(); int it=0; do{f(); it++;}while(Now()-t<0.3); best=std::min(best,(Now()-t)/it);} return best; }
int main(){
  engine eng(engine::kind::cpu, 0); stream s(eng);
  int shapes[][4]={{128,768,2304,0},{128,768,768,0},{128,768,3072,1},{128,3072,768,0},{1024,768,3072,1},{1024,3072,768,0}};
  for (int round=0; round<2; ++round)
  for(auto& sh: shapes){ int M=sh[0],K=sh[1],N=sh[2]; bool gelu=sh[3];
    std::vector<float> a((size_t)M*K), w((size_t)N*K), bias(N), c1((size_t)M*N), c2((size_t)M*N);
    for (auto& x : a) x = (rand() % 1000) / 1000.f - 0.5f;
    for (auto& x : w) x = (rand() % 1000) / 1000.f - 0.5f;
    for (auto& x : bias) x = (rand() % 1000) / 1000.f - 0.5f;
    memory::desc ad({M,K}, memory::data_type::f32, memory::format_tag::ab);
    memory::desc wd({K,N}, memory::data_type::f32, memory::format_tag::ba);  // W[N,K] read as [K,N]
    memory::desc bd({1,N}, memory::data_type::f32, memory::format_tag::ab);
    memory::desc cd({M,N}, memory::data_type::f32, memory::format_tag::ab);
    primitive_attr attr; post_ops po; if (gelu) po.append_eltwise(1.f, algorithm::eltwise_gelu_erf, 0.f, 0.f); attr.set_post_ops(po);
    matmul::primitive_desc pd(matmul::desc(ad, wd, bd, cd), attr, eng);
    matmul mm(pd);
    memory am(ad, eng, a.data()), wm(wd, eng, w.data()), bm(bd, eng, bias.data()), cm(cd, eng, c2.data());
    auto fused=[&]{ mm.execute(s, {{DNNL_ARG_SRC, am},{DNNL_ARG_WEIGHTS, wm},{DNNL_ARG_BIAS, bm},{DNNL_ARG_DST, cm}}); s.wait(); };
    auto now=[&]{ for (int i=0;i<M;i++) memcpy(&c1[(size_t)i*N], bias.data(), N*4);
      dnnl_sgemm('N','T',M,N,K,1.f,a.data(),K,w.data(),K,1.f,c1.data(),N);
      if (gelu) { 
#pragma omp parallel for
        for (long i=0;i<(long)c1.size();i++) c1[i]=0.5f*c1[i]*(1.f+std::erf(c1[i]*0.70710678f)); } };
    double tf=Best(fused), tn=Best(now);
    double err=0; for (size_t i=0;i<c1.size();i++) err=std::max(err,(double)std::fabs(c1[i]-c2[i]));
    printf("round %d %5dx%4dx%4d%s sgemm+passes %7.3f ms  fused matmul %7.3f ms  now/fused %.2f  maxdiff %.2g  impl %s\n",round+1,M,K,N,gelu?" gelu":"     ",tn*1e3,tf*1e3,tn/tf,err,pd.impl_info_str());
  }
}
