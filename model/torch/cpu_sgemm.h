// Float32 linear layers on the CPU through oneDNN's sgemm (Debian's
// libdnnl, the same oneDNN LibTorch links) instead of LibTorch's BLAS
// (OpenBLAS, whose Debian build runs its Haswell AVX2 kernels here): on
// this machine kind (AVX-512, 2 threads) oneDNN's sgemm ran the encoder's
// products at 255-350 GFLOP/s against OpenBLAS's 150-180, and deberta-base
// forwards 1.1-1.7x faster (bench/results/cpu-sgemm). Built when CMake
// finds oneDNN's header and the CPU backend chooses it (cpu_backend.h);
// otherwise every call goes to at::linear.
#ifndef DEBERTA_MODEL_TORCH_CPU_SGEMM_H_
#define DEBERTA_MODEL_TORCH_CPU_SGEMM_H_

#include <ATen/core/Tensor.h>

namespace deberta::model {

// Whether CpuSgemmLinear takes these operands: the CPU backend's float32
// linear layers on oneDNN (cpu_backend.h), float32 CPU
// tensors, a 2-D weight [N, K] with unit column stride, x [..., K].
bool CpuSgemmApplies(const at::Tensor& x, const at::Tensor& weight);

// x W^T + b, as at::linear; bias may be undefined. REQUIRES:
// CpuSgemmApplies(x, weight). Throws c10::Error if oneDNN fails.
at::Tensor CpuSgemmLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// Whether CpuSgemmProduct takes these operands: the CPU backend's
// sgemm_products, float32 CPU, the
// same number of dimensions (>= 3), each matrix row-major (unit stride in
// the last dimension, rows no closer than a row's width).
bool CpuSgemmProductApplies(const at::Tensor& a, const at::Tensor& b);

// The attention's batched products: a [..., M, K] times b [..., K, N], or
// times b^T when b is [..., N, K] (transpose_b), into a new contiguous
// [..., M, N]. b's batch dimensions broadcast (size 1) to a's. Strided views
// are read in place (q, k and v as they come out of the fused projection):
// no copy. The batch's matrices are shared out between the intra-op
// threads, one single-threaded sgemm each (small products: one call over
// both threads would spend more on the fork than on the product).
// REQUIRES: CpuSgemmProductApplies(a, b). Throws c10::Error if oneDNN fails.
at::Tensor CpuSgemmProduct(const at::Tensor& a, const at::Tensor& b, bool transpose_b);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_CPU_SGEMM_H_
