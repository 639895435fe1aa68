// Speed of oneDNN's float32 and u8 x s8 matmul at deberta-base's shapes.
#include <oneapi/dnnl/dnnl.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <string>
#include <vector>
using namespace dnnl;
static double Now(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}
int main(int argc,char**argv){
  engine eng(engine::kind::cpu,0); stream s(eng);
  int shapes[][3]={{128,768,2304},{128,768,768},{128,768,3072},{128,3072,768},{1024,768,3072},{1024,3072,768},{512,768,3072}};
  for(auto& sh: shapes){ int M=sh[0],K=sh[1],N=sh[2];
    double best[2]={1e9,1e9}; std::string impl[2];
    for(int kind=0;kind<2;kind++){
      auto sdt = kind? memory::data_type::u8: memory::data_type::f32;
      auto wdt = kind? memory::data_type::s8: memory::data_type::f32;
      memory::desc src({M,K},sdt,memory::format_tag::ab), wany({K,N},wdt,memory::format_tag::any), dst({M,N},memory::data_type::f32,memory::format_tag::ab);
      primitive_attr attr;
      if(kind){ attr.set_zero_points(DNNL_ARG_SRC,0,{DNNL_RUNTIME_S32_VAL}); attr.set_output_scales(2,{DNNL_RUNTIME_F32_VAL}); }
      matmul::primitive_desc pd(matmul::desc(src,wany,memory::desc(),dst),attr,eng);
      impl[kind]=pd.impl_info_str();
      memory ms(src,eng), mw(pd.weights_desc(),eng), md(dst,eng);
      memset(ms.get_data_handle(), 3, src.get_size()); memset(mw.get_data_handle(),1,pd.weights_desc().get_size());
      matmul mm(pd);
      std::vector<float> sc(N,0.01f); int zp=128;
      memory msc({{N},memory::data_type::f32,memory::format_tag::a},eng,sc.data());
      memory mzp({{1},memory::data_type::s32,memory::format_tag::a},eng,&zp);
      std::unordered_map<int,memory> args={{DNNL_ARG_SRC,ms},{DNNL_ARG_WEIGHTS,mw},{DNNL_ARG_DST,md}};
      if(kind){args[DNNL_ARG_ATTR_OUTPUT_SCALES]=msc; args[DNNL_ARG_ATTR_ZERO_POINTS|DNNL_ARG_SRC]=mzp;}
      for(int r=0;r<5;r++){ double t=Now(); int it=0; do{ mm.execute(s,args); s.wait(); it++;}while(Now()-t<0.3); double dt=(Now()-t)/it; if(dt<best[kind])best[kind]=dt; }
    }
    printf("%4dx%4dx%4d f32 %6.1f GFLOP/s [%s]  int8 %6.1f GOP/s [%s]  int8/f32 %.2f\n",M,K,N,2.0*M*K*N/best[0]/1e9,impl[0].c_str(),2.0*M*K*N/best[1]/1e9,impl[1].c_str(),best[0]/best[1]);
  }
}
