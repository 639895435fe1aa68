// Small building blocks of the DeBERTa modules: a dense layer that runs its
// matrix product in a chosen compute dtype, LayerNorm, embedding tables and
// activations. Parameter names are "weight" and "bias", as in checkpoints.
#ifndef DEBERTA_MODEL_TORCH_LAYERS_H_
#define DEBERTA_MODEL_TORCH_LAYERS_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <string>

#include "model/torch/int8_linear.h"
#include "model/torch/packed_linear.h"

namespace deberta::model {

enum class Activation { kGelu, kTanh, kRelu, kSwish, kSigmoid, kLinear };

// Name as in config.json; names were validated by ParseDebertaConfig.
Activation ActivationFromName(const std::string& name);
at::Tensor Activate(Activation activation, const at::Tensor& x);

// x W^T + b computed in `weight.scalar_type()` (x is cast to it if needed),
// result in that same dtype. Chains of matrix products (QKV -> attention ->
// output, FFN up -> activation -> down) stay in the compute dtype; only
// what feeds a residual, LayerNorm or softmax goes back to float32.
at::Tensor LinearInDType(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// y = x W^T + b. Parameters are loaded in float32 (the checkpoint's
// values); SetComputeDType keeps a converted copy that forward uses, and
// once every derived tensor is made, KeepOnlyComputeCopy drops the float32
// values (one copy of the weights in the serving dtype) and Release drops
// a layer that forward no longer uses (its values folded elsewhere).
class DenseImpl : public torch::nn::Module {
 public:
  DenseImpl(int64_t in_features, int64_t out_features, bool with_bias);
  // Result in float32, whatever the dtype of x.
  at::Tensor forward(const at::Tensor& x) const;
  // Result in the compute dtype, for feeding another matrix product
  // (float32 from an int8 layer: what it feeds quantizes float32).
  at::Tensor ForwardInComputeDType(const at::Tensor& x) const;
  // Activate(activation, ForwardInComputeDType(x)), in one pass where the
  // layer was packed or quantized with that activation fused (GELU).
  at::Tensor ActivatedInComputeDType(const at::Tensor& x, Activation activation) const;
  void SetComputeDType(at::ScalarType dtype);
  // The parameters become the compute-dtype copies (no float32 kept). Only
  // after everything that reads the float32 values has run.
  void KeepOnlyComputeCopy();
  // Empties the parameters and copies: forward must not be called after.
  void Release();
  // From now on the product runs in int8 (Int8Linear; forward's result in
  // float32, ForwardInComputeDType's in the compute dtype) and the
  // parameters are emptied. After Prepare. `then`: the activation that
  // follows the layer; GELU is fused into the product where it can be, and
  // only ActivatedInComputeDType(x, then) may run the layer after that.
  void QuantizeToInt8(Activation then = Activation::kLinear);
  // On the CPU in float32 or bfloat16: the product from now on runs on
  // weights packed for oneDNN's blocked kernels (PackedLinear) and the
  // parameters are emptied. Nothing changes where PackedLinear does not
  // apply (another device, int8, no oneDNN). After Prepare's other steps.
  // `then` as for QuantizeToInt8.
  void PackForCpu(Activation then = Activation::kLinear);
  bool packed() const { return packed_.defined(); }
  // Where packed or quantized: makes oneDNN's primitives for every row
  // count the product runs at, for the output dtype of its caller: forward
  // (float32), or with `in_compute_dtype` ForwardInComputeDType and
  // ActivatedInComputeDType. Computes nothing.
  void PrepareRowGrid(bool in_compute_dtype = false) const;

  at::Tensor weight;  // [out, in]
  at::Tensor bias;    // [out], undefined without bias

 private:
  at::Tensor ProductInComputeDType(const at::Tensor& x) const;  // With the fused activation, if any.

  at::Tensor compute_weight_;
  at::Tensor compute_bias_;
  at::ScalarType compute_dtype_ = at::kFloat;
  Int8Linear int8_;      // Defined once quantized.
  PackedLinear packed_;  // Defined once packed.
  bool fused_gelu_ = false;  // The packed or quantized product applies GELU.
};
TORCH_MODULE(Dense);

// LayerNorm over the last dimension, biased variance, always float32.
class NormImpl : public torch::nn::Module {
 public:
  NormImpl(int64_t size, double eps);
  at::Tensor forward(const at::Tensor& x) const;

  at::Tensor weight;
  at::Tensor bias;

 private:
  double eps_;
};
TORCH_MODULE(Norm);

// A lookup table [rows, width]; forward gathers rows.
class EmbeddingImpl : public torch::nn::Module {
 public:
  EmbeddingImpl(int64_t rows, int64_t width);
  // Rows of `weight` (float32, or the compute dtype: see
  // DebertaNetwork::Prepare) as float32.
  at::Tensor forward(const at::Tensor& ids) const;

  at::Tensor weight;
};
TORCH_MODULE(Embedding);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_LAYERS_H_
