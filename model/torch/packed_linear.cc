// PackedLinear on oneDNN's matmul primitive (C++ API, 2.x and 3.x).
#include "model/torch/packed_linear.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/util/Exception.h>

#include <string>

#include "model/torch/cpu_backend.h"
#include "model/torch/row_grid.h"

#ifdef DEBERTA_WITH_ONEDNN
#include "model/torch/onednn_engine.h"
#endif

namespace deberta::model {

#ifdef DEBERTA_WITH_ONEDNN
namespace {

using dnnl::memory;

memory::data_type OnednnType(at::ScalarType dtype) {
  return dtype == at::kBFloat16 ? memory::data_type::bf16 : memory::data_type::f32;
}

// Our one post-op: GELU, erf form (at::gelu's default).
dnnl::post_ops GeluPostOp() {
  dnnl::post_ops post_ops;
#if DNNL_VERSION_MAJOR >= 3
  post_ops.append_eltwise(dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
#else
  post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
#endif
  return post_ops;
}

// The product of `rows` rows: src [rows, in] and dst [rows, out] plain,
// the weights as `weights` describes them, the bias [1, out] float32. The
// scratchpad is the caller's (user mode), so concurrent calls of one
// primitive never share one.
dnnl::matmul::primitive_desc MatmulDesc(int64_t rows, int64_t in, int64_t out, memory::data_type dtype,
                                        const memory::desc& weights, bool with_bias, memory::data_type out_type,
                                        bool gelu) {
  const memory::desc src({rows, in}, dtype, memory::format_tag::ab);
  const memory::desc bias = with_bias ? memory::desc({1, out}, memory::data_type::f32, memory::format_tag::ab)
                                      : memory::desc();
  const memory::desc dst({rows, out}, out_type, memory::format_tag::ab);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (gelu) attr.set_post_ops(GeluPostOp());
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul::primitive_desc(OnednnCpuEngine(), src, weights, bias, dst, attr);
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, bias, dst), attr, OnednnCpuEngine());
#endif
}

bool IsBlockedKernel(const dnnl::matmul::primitive_desc& pd) {
  return std::string(pd.impl_info_str()).rfind("brg", 0) == 0;  // brgemm: oneDNN's blocked-weight kernels.
}

}  // namespace

struct PackedLinear::Packed {
  int64_t in = 0, out = 0;
  memory::data_type dtype = memory::data_type::f32;
  at::ScalarType scalar_type = at::kFloat;
  memory::desc weights_desc;
  at::Tensor weights;  // Bytes in weights_desc's layout.
  at::Tensor bias;     // float32 [out], or undefined.
  bool gelu = false;   // GELU applied after the bias.
};

bool PackedLinear::applies_gelu() const { return packed_ != nullptr && packed_->gelu; }

PackedLinear PackedLinear::Pack(const at::Tensor& weight, const at::Tensor& bias, bool gelu) {
  if (!CpuKernels().PacksLinear(weight.scalar_type()) || !weight.device().is_cpu() || weight.dim() != 2 ||
      (bias.defined() && !bias.device().is_cpu())) {
    return PackedLinear();
  }
  auto packed = std::make_shared<Packed>();
  packed->out = weight.size(0);
  packed->in = weight.size(1);
  packed->scalar_type = weight.scalar_type();
  packed->dtype = OnednnType(weight.scalar_type());
  packed->gelu = gelu;
  if (packed->in == 0 || packed->out == 0) return PackedLinear();
  const memory::desc any({packed->in, packed->out}, packed->dtype, memory::format_tag::any);
  try {
    // The layout oneDNN picks for these weights; it does not depend on the
    // number of rows (checked here for 1 and 128 rows: both must run it).
    const auto probe = MatmulDesc(128, packed->in, packed->out, packed->dtype, any, bias.defined(),
                                  memory::data_type::f32, gelu);
    if (!IsBlockedKernel(probe)) return PackedLinear();
    packed->weights_desc = probe.weights_desc();
    if (!IsBlockedKernel(MatmulDesc(1, packed->in, packed->out, packed->dtype, packed->weights_desc,
                                    bias.defined(), memory::data_type::f32, gelu))) {
      return PackedLinear();
    }
    packed->weights = ReorderWeights(weight.contiguous(), packed->dtype, packed->weights_desc);
  } catch (const dnnl::error&) {
    return PackedLinear();  // No blocked kernel for these operands: the caller's path stays.
  }
  // A copy, never the caller's tensor: DenseImpl::Release empties its
  // parameters in place (set_data), which a float32 bias would share.
  if (bias.defined()) packed->bias = bias.to(at::kFloat).contiguous().clone();
  PackedLinear linear;
  linear.packed_ = std::move(packed);
  if (!linear.ProductIsRight(weight, bias)) return PackedLinear();
  return linear;
}

bool PackedLinear::ProductIsRight(const at::Tensor& weight, const at::Tensor& bias) const {
  const Packed& p = *packed_;
  // A few rows of fixed values (no random numbers: the caller's generator
  // stays as it was), through the packed product and through LibTorch's.
  const at::Tensor x = at::arange(3 * p.in, at::kFloat).reshape({3, p.in}).mul(0.37).sin();
  at::Tensor want = at::linear(x.to(p.scalar_type).to(at::kFloat), weight.to(at::kFloat),
                               bias.defined() ? bias.to(at::kFloat) : at::Tensor());
  if (p.gelu) want = at::gelu(want);
  const at::Tensor got = Forward(x, at::kFloat);
  const double scale = want.abs().max().item<double>() + 1.0;
  const double tolerance = (p.scalar_type == at::kFloat ? 1e-4 : 2e-2) * scale;
  return (got - want).abs().max().item<double>() <= tolerance;
}

void PackedLinear::PrepareRowGrid(at::ScalarType out_dtype) const {
  const Packed& p = *packed_;
  try {
    for (const int64_t rows : WarmedRowCounts()) {
      dnnl::matmul(MatmulDesc(rows, p.in, p.out, p.dtype, p.weights_desc, p.bias.defined(), OnednnType(out_dtype),
                              p.gelu));
    }
  } catch (const dnnl::error& e) {
    TORCH_CHECK(false, "oneDNN matmul failed: ", e.what());
  }
}

at::Tensor PackedLinear::Forward(const at::Tensor& x, at::ScalarType out_dtype) const {
  RECORD_FUNCTION("deberta::packed_linear", std::vector<c10::IValue>());  // Named in profiles.
  const Packed& p = *packed_;
  TORCH_CHECK(x.size(-1) == p.in, "PackedLinear: input width ", x.size(-1), ", layer takes ", p.in);
  TORCH_CHECK(out_dtype == at::kFloat || out_dtype == p.scalar_type, "PackedLinear: output dtype ",
              c10::toString(out_dtype), " from a ", c10::toString(p.scalar_type), " layer");
  const at::Tensor rows_in = x.reshape({-1, p.in});
  const int64_t rows = rows_in.size(0), padded = PaddedRows(rows);
  std::vector<int64_t> out_sizes(x.sizes().begin(), x.sizes().end());
  out_sizes.back() = p.out;
  // The product writes every padded row; the caller sees the first `rows`.
  at::Tensor dst = at::empty({padded, p.out}, rows_in.options().dtype(out_dtype));
  if (rows == 0) return dst.view(out_sizes);
  at::Tensor src = rows_in;
  if (padded != rows || rows_in.scalar_type() != p.scalar_type || !rows_in.is_contiguous()) {
    // One copy (with the dtype conversion, if any) into the padded rows.
    src = at::empty({padded, p.in}, rows_in.options().dtype(p.scalar_type));
    src.narrow(0, 0, rows).copy_(rows_in);
    if (padded > rows) src.narrow(0, rows, padded - rows).zero_();
  }
  try {
    const dnnl::engine& engine = OnednnCpuEngine();
    dnnl::stream stream(engine);
    char* const src_bytes = static_cast<char*>(src.data_ptr());
    char* const dst_bytes = static_cast<char*>(dst.data_ptr());
    ForEachRowChunk(rows, [&](int64_t first, int64_t count) {
      const auto pd = MatmulDesc(count, p.in, p.out, p.dtype, p.weights_desc, p.bias.defined(), OnednnType(out_dtype),
                                 p.gelu);
      const dnnl::matmul matmul(pd);  // Made once per row count of the grid: oneDNN caches primitives.
      const at::Tensor scratch = at::empty({static_cast<int64_t>(pd.scratchpad_desc().get_size())}, at::kByte);
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, memory(pd.src_desc(), engine, src_bytes + first * p.in * src.element_size())},
          {DNNL_ARG_WEIGHTS, memory(p.weights_desc, engine, p.weights.data_ptr())},
          {DNNL_ARG_DST, memory(pd.dst_desc(), engine, dst_bytes + first * p.out * dst.element_size())},
          {DNNL_ARG_SCRATCHPAD, memory(pd.scratchpad_desc(), engine, scratch.data_ptr())}};
      if (p.bias.defined()) args.emplace(DNNL_ARG_BIAS, memory(pd.bias_desc(), engine, p.bias.data_ptr()));
      matmul.execute(stream, args);
      stream.wait();  // Before this chunk's scratchpad goes.
    });
  } catch (const dnnl::error& e) {
    TORCH_CHECK(false, "oneDNN matmul failed: ", e.what());
  }
  return dst.narrow(0, 0, rows).view(out_sizes);
}

#else  // No oneDNN: nothing is ever packed.

struct PackedLinear::Packed {};

PackedLinear PackedLinear::Pack(const at::Tensor&, const at::Tensor&, bool) { return PackedLinear(); }

void PackedLinear::PrepareRowGrid(at::ScalarType) const {}

bool PackedLinear::applies_gelu() const { return false; }

at::Tensor PackedLinear::Forward(const at::Tensor&, at::ScalarType) const {
  TORCH_CHECK(false, "this build has no oneDNN matmul");
}

#endif  // DEBERTA_WITH_ONEDNN

}  // namespace deberta::model
