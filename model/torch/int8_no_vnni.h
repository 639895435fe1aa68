// The int8 linear layer of a CPU without VNNI (AVX2 + FMA). oneDNN's int8
// kernel there sums u8 x s8 pairs in 16 bits (vpmaddubsw), which saturate
// unless 2 x u x |w| fits: with 8-bit activations (u <= 255) they can, so
// the activations are quantized symmetrically per row to [-127, 127] and
// split into their positive and negative parts (each u <= 127, 2 x 127 x
// 127 fits: the products are exact), and the two products' difference is
// the product. Twice the int8 work at about twice float32's rate: this
// pays where widening the weights to float32 per call costs the most, at
// up to kNoVnniSplitMaxRows rows; above, the weights are widened
// (docs/cpu-backend.md, "int8 without VNNI").
#ifndef DEBERTA_MODEL_TORCH_INT8_NO_VNNI_H_
#define DEBERTA_MODEL_TORCH_INT8_NO_VNNI_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

namespace deberta::model {

// Up to this many rows a call runs the split product; above, the widened
// weights (measured on an AMD EPYC without AVX-512: bench/results/int8-avx2-split).
inline constexpr int64_t kNoVnniSplitMaxRows = 64;

// The packed layer; opaque outside int8_no_vnni.cc.
struct NoVnniInt8Weights;

// Packs int8 `quantized` [out, in] (each channel's weights rounded on its
// float32 scale in `scales` [out], at most 127 in magnitude: Int8Linear's
// quantization) and `bias` [out] (may be undefined); with `gelu`, forward
// applies GELU (erf form) after the bias. nullptr where oneDNN makes no
// int8 matmul for them on weights in the plain [in, out] layout (or in a
// build without oneDNN): the caller falls back to another kernel.
std::shared_ptr<const NoVnniInt8Weights> PackNoVnniInt8(const at::Tensor& quantized, const at::Tensor& scales,
                                                        const at::Tensor& bias, bool gelu);

// x (float32, contiguous [rows, in]) -> [rows, out] in `out_dtype`
// (float32 or bfloat16).
at::Tensor NoVnniInt8Forward(const NoVnniInt8Weights& weights, const at::Tensor& x, at::ScalarType out_dtype);

// Makes the primitive of every row count of WarmedRowCounts (row_grid.h)
// that runs the split product into oneDNN's cache; computes nothing.
void PrepareNoVnniInt8RowGrid(const NoVnniInt8Weights& weights);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_INT8_NO_VNNI_H_
