// oneDNN's row-major sgemm for float32 CPU linear layers.
#include "model/torch/cpu_sgemm.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <vector>

#include "model/torch/cpu_backend.h"

#ifdef DEBERTA_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace deberta::model {

bool CpuSgemmApplies(const at::Tensor& x, const at::Tensor& weight) {
  return CpuKernels().float32_linear != LinearKernel::kLibTorch && x.device().is_cpu() && weight.device().is_cpu() &&
         x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat && weight.dim() == 2 &&
         weight.stride(1) == 1 && weight.stride(0) >= weight.size(1) && x.dim() >= 1 &&
         x.size(-1) == weight.size(1);
}

at::Tensor CpuSgemmLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  RECORD_FUNCTION("deberta::sgemm_linear", std::vector<c10::IValue>());  // Named in profiles.
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
#ifdef DEBERTA_WITH_ONEDNN
  const dnnl_status_t status =
      dnnl_sgemm('N', 'T', m, n, k, 1.0f, a.data_ptr<float>(), k, weight.data_ptr<float>(), weight.stride(0),
                 bias.defined() ? 1.0f : 0.0f, out.data_ptr<float>(), n);
  TORCH_CHECK(status == dnnl_success, "oneDNN sgemm failed (status ", static_cast<int>(status), ")");
#else
  TORCH_CHECK(false, "this build has no oneDNN sgemm");
#endif
  return out.view(out_sizes);
}

bool CpuSgemmProductApplies(const at::Tensor& a, const at::Tensor& b) {
  // Row-major matrices: unit column stride, rows apart by at least a row.
  auto row_major = [](const at::Tensor& x) {
    return x.stride(-1) == 1 && (x.size(-2) <= 1 || x.stride(-2) >= x.size(-1));
  };
  return CpuKernels().sgemm_products && a.device().is_cpu() && b.device().is_cpu() && a.scalar_type() == at::kFloat &&
         b.scalar_type() == at::kFloat && a.dim() >= 3 && a.dim() == b.dim() && row_major(a) && row_major(b);
}

at::Tensor CpuSgemmProduct(const at::Tensor& a, const at::Tensor& b, bool transpose_b) {
  RECORD_FUNCTION("deberta::sgemm_product", std::vector<c10::IValue>());
  const int64_t dims = a.dim(), m = a.size(-2), k = a.size(-1);
  const int64_t n = transpose_b ? b.size(-2) : b.size(-1);
  TORCH_CHECK((transpose_b ? b.size(-1) : b.size(-2)) == k, "CpuSgemmProduct: inner sizes differ");
  std::vector<int64_t> batch_sizes(a.sizes().begin(), a.sizes().end() - 2);
  std::vector<int64_t> b_sizes = batch_sizes;
  b_sizes.push_back(b.size(-2));
  b_sizes.push_back(b.size(-1));
  const at::Tensor bb = b.expand(b_sizes);  // Broadcast batch dimensions get stride 0.
  std::vector<int64_t> out_sizes = batch_sizes;
  out_sizes.push_back(m);
  out_sizes.push_back(n);
  at::Tensor out = at::empty(out_sizes, a.options());
  int64_t count = 1;
  for (int64_t size : batch_sizes) count *= size;
  if (count == 0 || m == 0 || n == 0) return out;
  if (k == 0) return out.zero_();
#ifdef DEBERTA_WITH_ONEDNN
  const float* a_data = a.data_ptr<float>();
  const float* b_data = bb.data_ptr<float>();
  float* out_data = out.data_ptr<float>();
  // A matrix of one row may have any row stride; sgemm wants one >= its width.
  const int64_t lda = m == 1 ? k : a.stride(-2);
  const int64_t ldb = bb.size(-2) == 1 ? bb.size(-1) : bb.stride(-2);
  std::atomic<int> failed{0};
  at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      // The i-th matrix's offsets, from its index in the batch dimensions.
      int64_t rest = i, a_offset = 0, b_offset = 0;
      for (int64_t d = dims - 3; d >= 0; --d) {
        const int64_t index = rest % batch_sizes[d];
        rest /= batch_sizes[d];
        a_offset += index * a.stride(d);
        b_offset += index * bb.stride(d);
      }
      // Inside the parallel region oneDNN runs each call on this thread.
      const dnnl_status_t status = dnnl_sgemm('N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, a_data + a_offset, lda,
                                              b_data + b_offset, ldb, 0.0f, out_data + i * m * n, n);
      if (status != dnnl_success) failed.store(static_cast<int>(status));
    }
  });
  TORCH_CHECK(failed.load() == 0, "oneDNN sgemm failed (status ", failed.load(), ")");
#else
  (void)transpose_b;
  (void)dims;
  TORCH_CHECK(false, "this build has no oneDNN sgemm");
#endif
  return out;
}

}  // namespace deberta::model
