// Int8Linear, as the CPU backend chooses: oneDNN's int8 matmul primitive
// on weights packed once at load (its VNNI brgemm kernels); LibTorch's
// quantized::linear_prepack and the packed weights' dynamic-quantization
// forward; or, on a CPU without VNNI, oneDNN's int8 kernel on activations
// split so that no 16-bit sum saturates (int8_no_vnni.h), or the int8
// weights widened to float32 for a float32 product.
#include "model/torch/int8_linear.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/quantized/PackedParams.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/torch/cpu_backend.h"
#include "model/torch/int8_no_vnni.h"
#include "model/torch/layers.h"
#include "model/torch/row_grid.h"

#ifdef DEBERTA_WITH_ONEDNN
#include "model/torch/onednn_engine.h"
#endif

namespace deberta::model {
namespace {

// Symmetric per output channel (oneDNN requires zero points of 0); a
// channel of zeros keeps a tiny scale instead of dividing by zero.
at::Tensor ChannelScales(const at::Tensor& w) {
  return std::get<0>(w.abs().max(/*dim=*/1)).div(127.0).clamp_min(1e-12);
}

// w [out, in] as int8 on its channels' `scales`.
at::Tensor QuantizeWeights(const at::Tensor& w, const at::Tensor& scales) {
  return at::round(w / scales.unsqueeze(1)).clamp(-127, 127).to(at::kChar).contiguous();
}

}  // namespace

#ifdef DEBERTA_WITH_ONEDNN
namespace {

// Activations: one scale and zero point per call from their range, which
// always holds 0 (so 0 is exact), on the full 8 bits of uint8 (VNNI sums
// in 32 bits: no overflow for reduce_range to avoid); as LibTorch's dynamic
// quantization.
struct ActivationParams {
  float scale;
  int32_t zero_point;
};

ActivationParams ChooseActivationParams(const at::Tensor& x) {
  auto [lo_t, hi_t] = at::aminmax(x);
  const float lo = std::min(lo_t.item<float>(), 0.0f), hi = std::max(hi_t.item<float>(), 0.0f);
  float scale = (hi - lo) / 255.0f;
  if (!(scale > 0) || !std::isfinite(scale)) scale = 1.0f;  // All zeros (or not finite: garbage either way).
  const float zero = std::nearbyint(-lo / scale);
  return {scale, static_cast<int32_t>(std::min(255.0f, std::max(0.0f, zero)))};
}

// in[0, n) -> uint8 round(in / scale) + zero point, clamped to [0, 255];
// ties round up. The same loop compiled for AVX-512, AVX2 and the
// baseline; the CPU backend says which runs (LibTorch's
// quantize_per_tensor, whose Debian build has no fbgemm, runs one element
// at a time: 27 of 70 ms per 1 x 128 forward, bench/op_profile).
inline __attribute__((always_inline)) void QuantizeLoop(const float* in, uint8_t* out, int64_t n, float inverse,
                                                        float zero_point) {
  for (int64_t k = 0; k < n; ++k) {
    // The range holds every input, so only rounding can leave [0, 255].
    const int32_t v = static_cast<int32_t>(in[k] * inverse + zero_point + 0.5f);
    out[k] = static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
  }
}
__attribute__((target("avx512f,avx512bw"))) void QuantizeRangeAvx512(const float* in, uint8_t* out, int64_t n,
                                                                     float inverse, float zero_point) {
  QuantizeLoop(in, out, n, inverse, zero_point);
}
__attribute__((target("avx2,fma"))) void QuantizeRangeAvx2(const float* in, uint8_t* out, int64_t n, float inverse,
                                                           float zero_point) {
  QuantizeLoop(in, out, n, inverse, zero_point);
}
void QuantizeRangePortable(const float* in, uint8_t* out, int64_t n, float inverse, float zero_point) {
  QuantizeLoop(in, out, n, inverse, zero_point);
}

// x (float32, contiguous [rows, in]) quantized with `params`, as the
// first rows of `padded_rows` (the rest zero).
at::Tensor QuantizeActivations(const at::Tensor& x, const ActivationParams& params, int64_t padded_rows) {
  at::Tensor q = at::empty({padded_rows, x.size(1)}, x.options().dtype(at::kByte));
  if (padded_rows > x.size(0)) q.narrow(0, x.size(0), padded_rows - x.size(0)).zero_();
  const float* in = x.data_ptr<float>();
  uint8_t* out = q.data_ptr<uint8_t>();
  const float inverse = 1.0f / params.scale, zero_point = static_cast<float>(params.zero_point);
  const CpuKernelChoice& kernels = CpuKernels();
  const auto quantize = kernels.avx512_kernels ? QuantizeRangeAvx512
                        : kernels.avx2_kernels ? QuantizeRangeAvx2
                                               : QuantizeRangePortable;
  at::parallel_for(0, x.numel(), 16384, [&](int64_t begin, int64_t end) {
    quantize(in + begin, out + begin, end - begin, inverse, zero_point);
  });
  return q;
}

using dnnl::memory;

// The int8 product of `rows` rows: src uint8 [rows, in] with a zero point
// given per call, weights int8 as `weights` describes them, dst float32.
// oneDNN 3.x: the source's and the weights' scales per call and the bias
// added after them. 2.x: the product of the source's scale and each
// channel's weight scale, then the bias, as post-ops on per-call tensors
// (a runtime output scale would leave the brgemm kernels, and scales fixed
// in the primitive made every layer's primitive a different one: 12 cache
// misses per new shape, 55 of a first 1 x 128 call's 60 extra ms). Either
// way nothing of a layer's own is in the primitive, so the layers share it.
// With `gelu`, GELU (erf form) last.
dnnl::matmul::primitive_desc Int8MatmulDesc(int64_t rows, int64_t in, int64_t out, const memory::desc& weights,
                                            bool with_bias, bool gelu,
                                            memory::data_type out_type = memory::data_type::f32) {
  const memory::desc src({rows, in}, memory::data_type::u8, memory::format_tag::ab);
  const memory::desc dst({rows, out}, out_type, memory::format_tag::ab);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
#if DNNL_VERSION_MAJOR >= 3
  attr.set_scales_mask(DNNL_ARG_SRC, 0);
  attr.set_scales_mask(DNNL_ARG_WEIGHTS, 1 << 1);
  attr.set_zero_points_mask(DNNL_ARG_SRC, 0);
  if (gelu) {
    dnnl::post_ops post_ops;
    post_ops.append_eltwise(dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    attr.set_post_ops(post_ops);
  }
  const memory::desc bias = with_bias ? memory::desc({1, out}, memory::data_type::f32, memory::format_tag::ab)
                                      : memory::desc();
  return dnnl::matmul::primitive_desc(OnednnCpuEngine(), src, weights, bias, dst, attr);
#else
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  dnnl::post_ops post_ops;
  post_ops.append_binary(dnnl::algorithm::binary_mul,
                         memory::desc({1, out}, memory::data_type::f32, memory::format_tag::ab));
  if (with_bias) {
    post_ops.append_binary(dnnl::algorithm::binary_add,
                           memory::desc({1, out}, memory::data_type::f32, memory::format_tag::ab));
  }
  if (gelu) post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
  attr.set_post_ops(post_ops);
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, memory::desc(), dst), attr,
                                      OnednnCpuEngine());
#endif
}

bool IsVnniKernel(const dnnl::matmul::primitive_desc& pd) {
  return std::string(pd.impl_info_str()).rfind("brg", 0) == 0;
}

}  // namespace
#endif  // DEBERTA_WITH_ONEDNN

struct Int8Linear::Packed {
  int64_t in = 0, out = 0;
  bool gelu = false;  // GELU applied after the bias (oneDNN's path only).
  // Int8Kernel::kWeightOnly: the int8 weights [out, in], their scales
  // [out, 1] and the bias, widened to float32 for each product.
  at::Tensor int8_weights, weight_scales, float_bias;
  // LibTorch's packed weights (the fallback).
  c10::intrusive_ptr<LinearPackedParamsBase> params;
  // Int8Kernel::kOnednnNoVnni's.
  std::shared_ptr<const NoVnniInt8Weights> no_vnni;
#ifdef DEBERTA_WITH_ONEDNN
  // oneDNN's: int8 weights in the kernels' layout, their scales, the bias.
  memory::desc weights_desc;
  at::Tensor weights;             // Bytes in weights_desc's layout.
  at::Tensor scales_tensor;       // Per output channel, float32 [out].
  at::Tensor bias;                // float32 [out], or undefined.
#endif
};

namespace {

bool HasOnednnQuantizedEngine() {
  const auto& engines = at::globalContext().supportedQEngines();
  return std::find(engines.begin(), engines.end(), at::QEngine::ONEDNN) != engines.end();
}

}  // namespace

void SelectOnednnQuantizedEngine() {
  if (HasOnednnQuantizedEngine()) at::globalContext().setQEngine(at::QEngine::ONEDNN);
}

absl::Status RequireOnednnQuantizedEngine() {
  if (!HasOnednnQuantizedEngine()) {
    return absl::FailedPreconditionError("int8 needs LibTorch's oneDNN quantized engine, which this build lacks");
  }
  if (at::globalContext().qEngine() != at::QEngine::ONEDNN) {
    return absl::FailedPreconditionError(
        "int8 needs oneDNN as LibTorch's quantized engine: call ConfigureRuntime before loading");
  }
  return absl::OkStatus();
}

at::ScalarType Int8ComputeDType() { return CpuKernels().int8_other_products; }

#ifdef DEBERTA_WITH_ONEDNN
bool Int8Linear::PackForOnednn(const at::Tensor& w, const at::Tensor& scales, const at::Tensor& bias,
                               Packed* packed) {
  const at::Tensor quantized = QuantizeWeights(w, scales);
  const memory::desc any({packed->in, packed->out}, memory::data_type::s8, memory::format_tag::any);
  try {
    // The weights' layout for 128 rows; 1 row must run on it too, and both
    // with VNNI (no saturating 16-bit sums).
    const auto probe = Int8MatmulDesc(128, packed->in, packed->out, any, bias.defined(), packed->gelu);
    if (!IsVnniKernel(probe)) return false;
    packed->weights_desc = probe.weights_desc();
    if (!IsVnniKernel(
            Int8MatmulDesc(1, packed->in, packed->out, packed->weights_desc, bias.defined(), packed->gelu))) {
      return false;
    }
    packed->weights = ReorderWeights(quantized, memory::data_type::s8, packed->weights_desc);
  } catch (const dnnl::error&) {
    return false;
  }
  packed->scales_tensor = scales.clone();
  // A copy: the caller may empty its own (DenseImpl::Release changes it in place).
  if (bias.defined()) packed->bias = bias.to(at::kFloat).contiguous().clone();
  return true;
}
#endif


bool Int8Linear::applies_gelu() const { return packed_ != nullptr && packed_->gelu; }

Int8Linear Int8Linear::Pack(const at::Tensor& weight, const at::Tensor& bias, bool gelu) {
  const at::Tensor w = weight.to(at::kFloat).contiguous();
  const at::Tensor scales = ChannelScales(w);
  auto packed = std::make_shared<Packed>();
  packed->out = w.size(0);
  packed->in = w.size(1);
  Int8Linear linear;
  const Int8Kernel kernel = CpuKernels().int8_linear;
  if (kernel == Int8Kernel::kWeightOnly || kernel == Int8Kernel::kOnednnNoVnni) {
    const at::Tensor quantized = QuantizeWeights(w, scales);
    if (kernel == Int8Kernel::kOnednnNoVnni) {
      packed->no_vnni = PackNoVnniInt8(quantized, scales, bias, gelu);
      if (packed->no_vnni) {
        packed->gelu = gelu;
        linear.packed_ = std::move(packed);
        return linear;
      }
    }
    packed->int8_weights = quantized;
    packed->weight_scales = scales.unsqueeze(1).clone();
    // A copy: the caller may empty its own (DenseImpl::Release changes it in place).
    if (bias.defined()) packed->float_bias = bias.to(at::kFloat).contiguous().clone();
    linear.packed_ = std::move(packed);
    return linear;
  }
#ifdef DEBERTA_WITH_ONEDNN
  packed->gelu = gelu;
  if (kernel == Int8Kernel::kOnednn && packed->in > 0 && packed->out > 0 &&
      PackForOnednn(w, scales, bias, packed.get())) {
    linear.packed_ = std::move(packed);
    return linear;
  }
#endif
  (void)gelu;
  packed->gelu = false;  // LibTorch's forward has no activation to add.
  const at::Tensor zero_points = at::zeros({w.size(0)}, at::kLong);
  const at::Tensor quantized =
      at::quantize_per_channel(w, scales.to(at::kDouble), zero_points, /*axis=*/0, at::kQInt8);
  static const auto prepack =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("quantized::linear_prepack", "")
          .typed<c10::intrusive_ptr<LinearPackedParamsBase>(at::Tensor, c10::optional<at::Tensor>)>();
  // A copy: the packed weights keep the tensor they are given, and the
  // caller may empty its own (DenseImpl::Release changes it in place).
  const c10::optional<at::Tensor> float_bias =
      bias.defined() ? c10::optional<at::Tensor>(bias.to(at::kFloat).clone()) : c10::nullopt;
  packed->params = prepack.call(quantized, float_bias);
  linear.packed_ = std::move(packed);
  return linear;
}

void Int8Linear::PrepareRowGrid(at::ScalarType out_dtype) const {
#ifdef DEBERTA_WITH_ONEDNN
  const Packed& p = *packed_;
  if (p.no_vnni) return PrepareNoVnniInt8RowGrid(*p.no_vnni);
  if (!p.weights.defined()) return;  // Not oneDNN's path.
  try {
    for (const int64_t rows : WarmedRowCounts()) {
      dnnl::matmul(Int8MatmulDesc(rows, p.in, p.out, p.weights_desc, p.bias.defined(), p.gelu,
                                  out_dtype == at::kBFloat16 ? memory::data_type::bf16 : memory::data_type::f32));
    }
  } catch (const dnnl::error& e) {
    TORCH_CHECK(false, "oneDNN int8 matmul failed: ", e.what());
  }
#else
  (void)out_dtype;
#endif
}

at::Tensor Int8Linear::forward(const at::Tensor& x, at::ScalarType out_dtype) const {
  const Packed& p = *packed_;
  TORCH_CHECK(out_dtype == at::kFloat || out_dtype == at::kBFloat16, "Int8Linear: output dtype ",
              c10::toString(out_dtype));
  const at::Tensor input = x.to(at::kFloat).contiguous();
  if (p.int8_weights.defined()) {
    // Widened per call: the weights stay int8 in memory (a quarter of
    // float32's), the product is float32's (no 16-bit sums to saturate).
    const at::Tensor weight = p.int8_weights.to(at::kFloat).mul_(p.weight_scales);
    return LinearInDType(input, weight, p.float_bias).to(out_dtype);
  }
  if (p.params) return p.params->apply_dynamic(input, /*reduce_range=*/false).to(out_dtype);
  if (p.no_vnni) {
    TORCH_CHECK(x.size(-1) == p.in, "Int8Linear: input width ", x.size(-1), ", layer takes ", p.in);
    std::vector<int64_t> out_sizes(x.sizes().begin(), x.sizes().end());
    out_sizes.back() = p.out;
    return NoVnniInt8Forward(*p.no_vnni, input.reshape({-1, p.in}), out_dtype).view(out_sizes);
  }
#ifdef DEBERTA_WITH_ONEDNN
  RECORD_FUNCTION("deberta::int8_linear", std::vector<c10::IValue>());  // Named in profiles.
  TORCH_CHECK(x.size(-1) == p.in, "Int8Linear: input width ", x.size(-1), ", layer takes ", p.in);
  const at::Tensor src = input.reshape({-1, p.in});
  const int64_t rows = src.size(0), padded = PaddedRows(rows);
  std::vector<int64_t> out_sizes(x.sizes().begin(), x.sizes().end());
  out_sizes.back() = p.out;
  // The product writes every padded row (row_grid.h); the caller sees the first `rows`.
  at::Tensor dst = at::empty({padded, p.out}, src.options().dtype(out_dtype));
  if (rows == 0) return dst.view(out_sizes);
  ActivationParams params = ChooseActivationParams(src);
  const at::Tensor quantized = QuantizeActivations(src, params, padded);
#if DNNL_VERSION_MAJOR < 3
  // Each channel's weight scale times this call's source scale.
  const at::Tensor output_scales = p.scales_tensor * params.scale;
#endif
  try {
    const dnnl::engine& engine = OnednnCpuEngine();
    dnnl::stream stream(engine);
    auto scalar = [&](memory::data_type type, void* data) {
      return memory({{1}, type, memory::format_tag::a}, engine, data);
    };
    const uint8_t* const src_bytes = quantized.data_ptr<uint8_t>();
    char* const dst_bytes = static_cast<char*>(dst.data_ptr());
    ForEachRowChunk(rows, [&](int64_t first, int64_t count) {
      const auto pd = Int8MatmulDesc(count, p.in, p.out, p.weights_desc, p.bias.defined(), p.gelu,
                                     out_dtype == at::kBFloat16 ? memory::data_type::bf16 : memory::data_type::f32);
      const dnnl::matmul matmul(pd);  // Made once per row count of the grid: oneDNN caches primitives.
      const at::Tensor scratch = at::empty({static_cast<int64_t>(pd.scratchpad_desc().get_size())}, at::kByte);
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, memory(pd.src_desc(), engine, const_cast<uint8_t*>(src_bytes + first * p.in))},
          {DNNL_ARG_WEIGHTS, memory(p.weights_desc, engine, p.weights.data_ptr())},
          {DNNL_ARG_DST, memory(pd.dst_desc(), engine, dst_bytes + first * p.out * dst.element_size())},
          {DNNL_ARG_SCRATCHPAD, memory(pd.scratchpad_desc(), engine, scratch.data_ptr())},
          {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, scalar(memory::data_type::s32, &params.zero_point)}};
#if DNNL_VERSION_MAJOR >= 3
      args.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, scalar(memory::data_type::f32, &params.scale));
      args.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS,
                   memory({{p.out}, memory::data_type::f32, memory::format_tag::a}, engine, p.scales_tensor.data_ptr()));
      if (p.bias.defined()) args.emplace(DNNL_ARG_BIAS, memory(pd.bias_desc(), engine, p.bias.data_ptr()));
#else
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1,
                   memory({{1, p.out}, memory::data_type::f32, memory::format_tag::ab}, engine,
                          output_scales.data_ptr()));
      if (p.bias.defined()) {
        args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1,
                     memory({{1, p.out}, memory::data_type::f32, memory::format_tag::ab}, engine, p.bias.data_ptr()));
      }
#endif
      matmul.execute(stream, args);
      stream.wait();  // Before this chunk's scratchpad goes.
    });
  } catch (const dnnl::error& e) {
    TORCH_CHECK(false, "oneDNN int8 matmul failed: ", e.what());
  }
  return dst.narrow(0, 0, rows).view(out_sizes);
#else
  TORCH_CHECK(false, "Int8Linear: not packed");
#endif
}

}  // namespace deberta::model
