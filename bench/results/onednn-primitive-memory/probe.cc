// Resident memory per oneDNN matmul primitive (a probe, not part of the
// build): makes one primitive for every row count 8, 16, ..., 1024 of one
// product kind and prints the process's VmRSS growth. Kinds: "int8" (u8 x
// s8 with a runtime source zero point and per-channel scale and bias as
// binary post-ops: Int8Linear's on oneDNN 2.x), "int8os" (the same with a
// runtime output scale instead: leaves the brgemm kernels), "f32" (a plain
// float32 product). g++ -O1 -std=c++17 probe.cc -o probe -ldnnl
#include <oneapi/dnnl/dnnl.hpp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>
using namespace dnnl;
long Rss() { std::ifstream f("/proc/self/status"); std::string l; while (std::getline(f,l)) if (l.rfind("VmRSS",0)==0) return std::stol(l.substr(6)); return 0; }
int main(int argc, char** argv) {
  engine eng(engine::kind::cpu, 0);
  std::string kind = argv[1];
  int in = atoi(argv[2]), out = atoi(argv[3]);
  int grain = argc > 4 ? atoi(argv[4]) : 8;
  memory::desc wany({in, out}, memory::data_type::s8, memory::format_tag::any);
  std::vector<primitive> keep;
  long before = Rss();
  int n = 0;
  for (int rows = grain; rows <= 1024; rows += grain, ++n) {
    primitive_attr attr; attr.set_scratchpad_mode(scratchpad_mode::user);
    if (kind == "int8") {
      memory::desc src({rows, in}, memory::data_type::u8, memory::format_tag::ab);
      memory::desc dst({rows, out}, memory::data_type::f32, memory::format_tag::ab);
      attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      post_ops po; po.append_binary(algorithm::binary_mul, memory::desc({1,out}, memory::data_type::f32, memory::format_tag::ab));
      po.append_binary(algorithm::binary_add, memory::desc({1,out}, memory::data_type::f32, memory::format_tag::ab));
      attr.set_post_ops(po);
      matmul::primitive_desc pd(matmul::desc(src, wany, memory::desc(), dst), attr, eng);
      if (rows == grain) printf("impl %s scratch %zu\n", pd.impl_info_str(), pd.scratchpad_desc().get_size());
      keep.push_back(matmul(pd));
    } else if (kind == "int8os") {
      memory::desc src({rows, in}, memory::data_type::u8, memory::format_tag::ab);
      memory::desc dst({rows, out}, memory::data_type::f32, memory::format_tag::ab);
      attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      attr.set_output_scales(2, {DNNL_RUNTIME_F32_VAL});
      memory::desc bias({1,out}, memory::data_type::f32, memory::format_tag::ab);
      matmul::primitive_desc pd(matmul::desc(src, wany, bias, dst), attr, eng);
      if (rows == grain) printf("impl %s scratch %zu\n", pd.impl_info_str(), pd.scratchpad_desc().get_size());
      keep.push_back(matmul(pd));
    } else {
      memory::desc src({rows, in}, memory::data_type::f32, memory::format_tag::ab);
      memory::desc w({in, out}, memory::data_type::f32, memory::format_tag::any);
      memory::desc dst({rows, out}, memory::data_type::f32, memory::format_tag::ab);
      matmul::primitive_desc pd(matmul::desc(src, w, memory::desc(), dst), attr, eng);
      if (rows == grain) printf("impl %s\n", pd.impl_info_str());
      keep.push_back(matmul(pd));
    }
  }
  printf("%s %dx%d: %d primitives, +%ld KiB, %.0f KiB each\n", kind.c_str(), in, out, n, Rss() - before, (Rss()-before)/(double)n);
}
