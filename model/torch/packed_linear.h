// PackedLinear: a float32 or bfloat16 linear layer on the CPU whose
// weights are reordered once, at load, into the blocked layout oneDNN's
// matmul primitive asks for (its brgemm kernels: AVX-512, AVX512-BF16).
// A plain-layout product repacks the weights on every call; at 128 rows
// that is a large share of its time. Measured here (2 threads, 128 x 768
// times 768 x 3072): sgemm 330 GFLOP/s, packed float32 425, packed
// bfloat16 860 (LibTorch's bf16 linear: 390). Built when CMake finds
// oneDNN's header (Debian's libdnnl-dev, 2.x or 3.x); without it, or where
// oneDNN has no such kernel, nothing is packed and callers keep their path.
#ifndef DEBERTA_MODEL_TORCH_PACKED_LINEAR_H_
#define DEBERTA_MODEL_TORCH_PACKED_LINEAR_H_

#include <ATen/core/Tensor.h>

#include <memory>

namespace deberta::model {

class PackedLinear {
 public:
  PackedLinear() = default;

  // `weight` [out, in] and `bias` [out] (may be undefined) of a CPU layer,
  // float32 or bfloat16: the product then runs in the weight's dtype, with
  // the bias added in float32. An undefined PackedLinear where the CPU
  // backend does not pack this dtype (cpu_backend.h), the tensors are not on the CPU or not of those dtypes, or oneDNN
  // offers no blocked kernel for them (e.g. bfloat16 without avx512_bf16),
  // or the packed product disagrees with LibTorch's on a few fixed rows
  // (checked at every Pack: oneDNN 3.7 gets float32 products whose output
  // count is not a multiple of its block wrong, 2.6 does not).
  // With `gelu`, the product applies GELU (erf form) after the bias, in
  // float32 before any conversion to the output dtype: one pass less.
  static PackedLinear Pack(const at::Tensor& weight, const at::Tensor& bias, bool gelu = false);

  bool defined() const { return packed_ != nullptr; }
  bool applies_gelu() const;
  // x [..., in] (converted to the weight's dtype if it is not) -> a new
  // contiguous [..., out] in `out_dtype`: float32, or bfloat16 for a
  // bfloat16 layer. Thread-safe. Throws c10::Error if oneDNN fails.
  at::Tensor Forward(const at::Tensor& x, at::ScalarType out_dtype) const;
  // Makes the oneDNN primitive of every row count of WarmedRowCounts for
  // `out_dtype`, into oneDNN's cache; computes nothing.
  void PrepareRowGrid(at::ScalarType out_dtype) const;

 private:
  // Pack's check of the packed product against at::linear.
  bool ProductIsRight(const at::Tensor& weight, const at::Tensor& bias) const;

  // The packed weights and oneDNN's descriptor of them, behind a type of
  // the .cc file: oneDNN's headers stay out of every includer.
  struct Packed;
  std::shared_ptr<const Packed> packed_;
};

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_PACKED_LINEAR_H_
