// The int8 linear layer of a CPU without VNNI: int8 weights, activations
// quantized symmetrically per row and split into their positive and
// negative parts, oneDNN's u8 x s8 -> s32 product of each part, and our own
// pass for the difference, the scales and the bias (then GELU).
#include "model/torch/int8_no_vnni.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/torch/cpu_backend.h"
#include "model/torch/row_grid.h"

#ifdef DEBERTA_WITH_ONEDNN
#include "model/torch/onednn_engine.h"
#endif

namespace deberta::model {

struct NoVnniInt8Weights {
  int64_t in = 0, out = 0;
  bool gelu = false;
#ifdef DEBERTA_WITH_ONEDNN
  dnnl::memory::desc weights_desc;
#endif
  at::Tensor weights;  // int8 bytes in weights_desc's layout.
  at::Tensor scales;   // float32 [out]: each channel's weight scale.
  at::Tensor bias;     // float32 [out], zeros where the layer has none.
};

namespace {

// One row's scale: its largest magnitude over 127 (1 for a row of zeros,
// or of anything not finite: garbage either way).
float RowScale(float largest) {
  const float scale = largest / 127.0f;
  return scale > 0 && std::isfinite(scale) ? scale : 1.0f;
}

// in[0, n) -> q = round(in / scale) in [-127, 127], written as its
// positive part to `positive` and its negative part's magnitude to
// `negative` (both uint8 in [0, 127]); ties round away from zero. Compiled
// for AVX2 and the baseline (the CPU backend says which runs); the
// compiler vectorizes both.
inline __attribute__((always_inline)) void SplitRowLoop(const float* in, uint8_t* positive, uint8_t* negative,
                                                        int64_t n, float inverse) {
  for (int64_t k = 0; k < n; ++k) {
    const float v = in[k] * inverse;  // In [-127, 127]: the scale is the row's largest magnitude.
    const int32_t up = static_cast<int32_t>(v + 0.5f), down = static_cast<int32_t>(0.5f - v);
    positive[k] = static_cast<uint8_t>(up < 0 ? 0 : up > 127 ? 127 : up);
    negative[k] = static_cast<uint8_t>(down < 0 ? 0 : down > 127 ? 127 : down);
  }
}
__attribute__((target("avx2,fma"))) void SplitRowAvx2(const float* in, uint8_t* positive, uint8_t* negative,
                                                      int64_t n, float inverse) {
  SplitRowLoop(in, positive, negative, n, inverse);
}
void SplitRowPortable(const float* in, uint8_t* positive, uint8_t* negative, int64_t n, float inverse) {
  SplitRowLoop(in, positive, negative, n, inverse);
}

// One row: out = row_scale x scale_n x (positive sums - negative sums) + bias.
inline __attribute__((always_inline)) void CombineRowLoop(const int32_t* positive, const int32_t* negative, float* out,
                                                          int64_t n, float row_scale, const float* scales,
                                                          const float* bias) {
  for (int64_t k = 0; k < n; ++k) {
    out[k] = row_scale * (scales[k] * static_cast<float>(positive[k] - negative[k])) + bias[k];
  }
}
__attribute__((target("avx2,fma"))) void CombineRowAvx2(const int32_t* positive, const int32_t* negative, float* out,
                                                        int64_t n, float row_scale, const float* scales,
                                                        const float* bias) {
  CombineRowLoop(positive, negative, out, n, row_scale, scales, bias);
}
void CombineRowPortable(const int32_t* positive, const int32_t* negative, float* out, int64_t n, float row_scale,
                        const float* scales, const float* bias) {
  CombineRowLoop(positive, negative, out, n, row_scale, scales, bias);
}

#ifdef DEBERTA_WITH_ONEDNN
using dnnl::memory;

// The int8 product of `rows` rows: src uint8 [rows, in], weights int8 as
// `weights` describes them, dst int32: nothing of a layer's own is in the
// primitive, so layers of one shape share it.
dnnl::matmul::primitive_desc SumsDesc(int64_t rows, int64_t in, int64_t out, const memory::desc& weights) {
  const memory::desc src({rows, in}, memory::data_type::u8, memory::format_tag::ab);
  const memory::desc dst({rows, out}, memory::data_type::s32, memory::format_tag::ab);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul::primitive_desc(OnednnCpuEngine(), src, weights, memory::desc(), dst, attr);
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, memory::desc(), dst), attr,
                                      OnednnCpuEngine());
#endif
}

bool IsReference(const dnnl::matmul::primitive_desc& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}
#endif  // DEBERTA_WITH_ONEDNN

}  // namespace

std::shared_ptr<const NoVnniInt8Weights> PackNoVnniInt8(const at::Tensor& quantized, const at::Tensor& scales,
                                                        const at::Tensor& bias, bool gelu) {
#ifdef DEBERTA_WITH_ONEDNN
  TORCH_CHECK(quantized.dim() == 2 && quantized.scalar_type() == at::kChar && scales.numel() == quantized.size(0),
              "PackNoVnniInt8: weights ", quantized.sizes(), " ", c10::toString(quantized.scalar_type()),
              ", scales ", scales.sizes());
  auto packed = std::make_shared<NoVnniInt8Weights>();
  packed->out = quantized.size(0);
  packed->in = quantized.size(1);
  packed->gelu = gelu;
  if (packed->in == 0 || packed->out == 0) return nullptr;
  packed->scales = scales.to(at::kFloat).contiguous().clone();
  packed->bias = bias.defined() ? bias.to(at::kFloat).contiguous().clone() : at::zeros({packed->out}, at::kFloat);
  // The plain [in, out] layout, always: above kNoVnniSplitMaxRows the
  // forward reads the weights as that matrix to widen them.
  packed->weights_desc = memory::desc({packed->in, packed->out}, memory::data_type::s8, memory::format_tag::ab);
  try {
    // oneDNN's reference loops are slower than float32's products.
    if (IsReference(SumsDesc(128, packed->in, packed->out, packed->weights_desc)) ||
        IsReference(SumsDesc(1, packed->in, packed->out, packed->weights_desc))) {
      return nullptr;
    }
    packed->weights = ReorderWeights(quantized.contiguous(), memory::data_type::s8, packed->weights_desc);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return packed;
#else
  (void)quantized, (void)scales, (void)bias, (void)gelu;
  return nullptr;
#endif
}

void PrepareNoVnniInt8RowGrid(const NoVnniInt8Weights& p) {
#ifdef DEBERTA_WITH_ONEDNN
  try {
    for (const int64_t rows : WarmedRowCounts()) {
      if (rows <= kNoVnniSplitMaxRows) dnnl::matmul(SumsDesc(rows, p.in, p.out, p.weights_desc));
    }
  } catch (const dnnl::error& e) {
    TORCH_CHECK(false, "oneDNN int8 matmul failed: ", e.what());
  }
#else
  (void)p;
#endif
}

at::Tensor NoVnniInt8Forward(const NoVnniInt8Weights& p, const at::Tensor& x, at::ScalarType out_dtype) {
  RECORD_FUNCTION("deberta::int8_linear", std::vector<c10::IValue>());  // Named in profiles.
  TORCH_CHECK(x.dim() == 2 && x.size(1) == p.in && x.scalar_type() == at::kFloat && x.is_contiguous(),
              "NoVnniInt8Forward: input ", x.sizes(), ", layer takes [rows, ", p.in, "] float32");
  const int64_t rows = x.size(0), padded = PaddedRows(rows);
  at::Tensor out = at::empty({padded, p.out}, x.options());
  if (rows == 0) return out.to(out_dtype);
#ifdef DEBERTA_WITH_ONEDNN
  if (rows > kNoVnniSplitMaxRows) {
    // Many rows: the weights widened to float32 once for all of them cost
    // less than a second product. As their plain [in, out], into LibTorch's
    // BLAS: oneDNN's sgemm (float32's linear kernel) ran this product
    // slower, 0.70-1.04 of it (bench/results/int8-avx2-widened-sgemm).
    const at::Tensor widened = p.weights.view(at::kChar).view({p.in, p.out}).to(at::kFloat).mul_(p.scales);
    at::Tensor live = at::addmm(p.bias, x, widened);
    if (p.gelu) at::gelu_(live);
    return out_dtype == at::kFloat ? live : live.to(out_dtype);
  }
  // Each row's scale, then its two parts (padded rows zero): [positive
  // parts of every padded row; negative parts of every padded row].
  const at::Tensor largest = std::get<0>(x.abs().max(/*dim=*/1)).contiguous();
  const float* const largest_of_row = largest.data_ptr<float>();
  std::vector<float> row_scales(rows);
  for (int64_t r = 0; r < rows; ++r) row_scales[r] = RowScale(largest_of_row[r]);
  at::Tensor parts = at::empty({2 * padded, p.in}, x.options().dtype(at::kByte));
  if (padded > rows) {
    parts.narrow(0, rows, padded - rows).zero_();
    parts.narrow(0, padded + rows, padded - rows).zero_();
  }
  const bool avx2 = CpuKernels().avx2_kernels;
  const auto split = avx2 ? SplitRowAvx2 : SplitRowPortable;
  const auto combine = avx2 ? CombineRowAvx2 : CombineRowPortable;
  const float* in = x.data_ptr<float>();
  uint8_t* const positive = parts.data_ptr<uint8_t>();
  uint8_t* const negative = positive + padded * p.in;
  at::parallel_for(0, rows, std::max<int64_t>(1, 16384 / p.in), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      split(in + r * p.in, positive + r * p.in, negative + r * p.in, p.in, 1.0f / row_scales[r]);
    }
  });
  // Two products on the same primitive and weights, one per part: each
  // sums u8 values of at most 127 times int8 weights, so no 16-bit pair
  // sum (2 x 127 x 127 = 32258) can saturate.
  at::Tensor sums = at::empty({2 * padded, p.out}, x.options().dtype(at::kInt));
  int32_t* const positive_sums = sums.data_ptr<int32_t>();
  int32_t* const negative_sums = positive_sums + padded * p.out;
  try {
    const dnnl::engine& engine = OnednnCpuEngine();
    dnnl::stream stream(engine);
    ForEachRowChunk(rows, [&](int64_t first, int64_t count) {
      const auto pd = SumsDesc(count, p.in, p.out, p.weights_desc);
      const dnnl::matmul matmul(pd);  // Made once per row count of the grid: oneDNN caches primitives.
      const at::Tensor scratch = at::empty({static_cast<int64_t>(pd.scratchpad_desc().get_size())}, at::kByte);
      const memory weights(p.weights_desc, engine, p.weights.data_ptr());
      const memory scratchpad(pd.scratchpad_desc(), engine, scratch.data_ptr());
      for (const auto& [src, dst] : {std::pair{positive, positive_sums}, std::pair{negative, negative_sums}}) {
        matmul.execute(stream, {{DNNL_ARG_SRC, memory(pd.src_desc(), engine, src + first * p.in)},
                                {DNNL_ARG_WEIGHTS, weights},
                                {DNNL_ARG_DST, memory(pd.dst_desc(), engine, dst + first * p.out)},
                                {DNNL_ARG_SCRATCHPAD, scratchpad}});
        stream.wait();  // The scratchpad is shared.
      }
    });
  } catch (const dnnl::error& e) {
    TORCH_CHECK(false, "oneDNN int8 matmul failed: ", e.what());
  }
  float* result = out.data_ptr<float>();
  const float* scales = p.scales.data_ptr<float>();
  const float* bias = p.bias.data_ptr<float>();
  at::parallel_for(0, rows, std::max<int64_t>(1, 16384 / p.out), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      combine(positive_sums + r * p.out, negative_sums + r * p.out, result + r * p.out, p.out, row_scales[r], scales,
              bias);
    }
  });
  at::Tensor live = out.narrow(0, 0, rows);
  if (p.gelu) at::gelu_(live);
  return out_dtype == at::kFloat ? live : live.to(out_dtype);
#else
  TORCH_CHECK(false, "NoVnniInt8Forward: built without oneDNN");
#endif
}

}  // namespace deberta::model
