// oneDNN's row-major sgemm for float32 CPU linear layers.
#include "model/torch/cpu_sgemm.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <atomic>

#ifdef DEBERTA_WITH_ONEDNN_SGEMM
#include <oneapi/dnnl/dnnl.h>
#endif

namespace deberta::model {
namespace {

#ifdef DEBERTA_WITH_ONEDNN_SGEMM
std::atomic<bool> g_enabled{true};
#else
std::atomic<bool> g_enabled{false};
#endif

}  // namespace

bool CpuSgemmEnabled() { return g_enabled.load(std::memory_order_relaxed); }

void SetCpuSgemmEnabled(bool enabled) {
#ifdef DEBERTA_WITH_ONEDNN_SGEMM
  g_enabled.store(enabled, std::memory_order_relaxed);
#else
  (void)enabled;
#endif
}

bool CpuSgemmApplies(const at::Tensor& x, const at::Tensor& weight) {
  return CpuSgemmEnabled() && x.device().is_cpu() && weight.device().is_cpu() &&
         x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat && weight.dim() == 2 &&
         weight.stride(1) == 1 && weight.stride(0) >= weight.size(1) && x.dim() >= 1 &&
         x.size(-1) == weight.size(1);
}

at::Tensor CpuSgemmLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const int64_t k = weight.size(1), n = weight.size(0);
  const at::Tensor a = x.reshape({-1, k}).contiguous();
  const int64_t m = a.size(0);
  std::vector<int64_t> out_sizes(x.sizes().begin(), x.sizes().end());
  out_sizes.back() = n;
  // With a bias, C starts as the bias in every row and the product is added
  // to it (beta = 1): one pass over C, no separate addition. A copy, never
  // bias.expand(...).contiguous(): for one row that is the bias itself,
  // which the product would then overwrite.
  at::Tensor out = at::empty({m, n}, a.options());
  if (bias.defined()) out.copy_(bias.expand({m, n}));
  if (m == 0 || n == 0) return out.view(out_sizes);
#ifdef DEBERTA_WITH_ONEDNN_SGEMM
  const dnnl_status_t status =
      dnnl_sgemm('N', 'T', m, n, k, 1.0f, a.data_ptr<float>(), k, weight.data_ptr<float>(), weight.stride(0),
                 bias.defined() ? 1.0f : 0.0f, out.data_ptr<float>(), n);
  TORCH_CHECK(status == dnnl_success, "oneDNN sgemm failed (status ", static_cast<int>(status), ")");
#else
  TORCH_CHECK(false, "this build has no oneDNN sgemm");
#endif
  return out.view(out_sizes);
}

}  // namespace deberta::model
