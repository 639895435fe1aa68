// Int8Linear: a linear layer with int8 weights (one scale per output
// channel, symmetric) and activations quantized at run time to uint8 (one
// scale and zero point per call). The `--dtype=int8` path of the encoder's
// linear layers. As the CPU backend chooses (cpu_backend.h): oneDNN's int8
// matmul primitive on weights packed once at load, or LibTorch's quantized
// CPU engine (oneDNN inside LibTorch too, but its dynamic forward
// re-creates its work per call: measured slower). On a CPU without VNNI
// (whose u8 x s8 products saturate 16-bit sums), oneDNN's int8 kernel on
// activations split so that no sum saturates (int8_no_vnni.h), or, without
// oneDNN, the int8 weights widened to float32 for each product.
#ifndef DEBERTA_MODEL_TORCH_INT8_LINEAR_H_
#define DEBERTA_MODEL_TORCH_INT8_LINEAR_H_

#include <ATen/core/Tensor.h>

#include <memory>

#include "absl/status/status.h"

namespace deberta::model {

// Selects oneDNN as LibTorch's quantized engine (process-wide), so that
// Int8Linear runs its kernels, where this LibTorch has it (ConfigureRuntime
// calls it once); a no-op otherwise.
void SelectOnednnQuantizedEngine();
// OK if oneDNN is LibTorch's quantized engine; FailedPrecondition saying
// why not (this LibTorch lacks it, or ConfigureRuntime was not called).
absl::Status RequireOnednnQuantizedEngine();

// The compute dtype of an int8 network's other products (attention scores,
// position terms, heads): CpuKernels().int8_other_products, bfloat16 where
// the CPU has bf16 instructions (bmm 3x faster than float32 here).
at::ScalarType Int8ComputeDType();

class Int8Linear {
 public:
  Int8Linear() = default;
  // From float32 `weight` [out, in] and `bias` [out] (may be undefined):
  // each output channel's weights scaled by max |w| / 127 and rounded.
  // REQUIRES: RequireOnednnQuantizedEngine() is OK.
  // With `gelu`, GELU (erf form) is applied after the bias where the
  // oneDNN path is taken (see applies_gelu).
  static Int8Linear Pack(const at::Tensor& weight, const at::Tensor& bias, bool gelu = false);

  bool defined() const { return packed_ != nullptr; }
  // Whether forward applies GELU (asked for, and the oneDNN path taken).
  bool applies_gelu() const;
  // x (float32, [..., in]) -> [..., out] in `out_dtype` (float32 or
  // bfloat16: written so by the product itself on the oneDNN path).
  at::Tensor forward(const at::Tensor& x, at::ScalarType out_dtype = at::kFloat) const;
  // On the oneDNN path: makes the primitive of every row count of
  // WarmedRowCounts for `out_dtype`, into oneDNN's cache; computes
  // nothing. A no-op on the other paths.
  void PrepareRowGrid(at::ScalarType out_dtype) const;

 private:
  // LibTorch's packed weights, behind a type of the .cc file: their header
  // (ATen/native/quantized/PackedParams.h) stays out of every includer.
  struct Packed;
  // oneDNN's packing of the quantized weights into `packed`; false where it
  // has no int8 kernel for them (then LibTorch's engine packs them).
  static bool PackForOnednn(const at::Tensor& w, const at::Tensor& scales, const at::Tensor& bias, Packed* packed);
  std::shared_ptr<const Packed> packed_;
};

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_INT8_LINEAR_H_
