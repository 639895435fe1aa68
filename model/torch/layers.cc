// Dense, LayerNorm, Embedding and activations.
#include "model/torch/layers.h"

#include <ATen/ATen.h>

#include "model/torch/cpu_sgemm.h"

namespace deberta::model {

Activation ActivationFromName(const std::string& name) {
  if (name == "tanh") return Activation::kTanh;
  if (name == "relu") return Activation::kRelu;
  if (name == "swish") return Activation::kSwish;
  if (name == "sigmoid") return Activation::kSigmoid;
  if (name == "linear") return Activation::kLinear;
  return Activation::kGelu;
}

at::Tensor Activate(Activation activation, const at::Tensor& x) {
  switch (activation) {
    case Activation::kGelu: return at::gelu(x);  // Exact erf form.
    case Activation::kTanh: return at::tanh(x);
    case Activation::kRelu: return at::relu(x);
    case Activation::kSwish: return at::silu(x);
    case Activation::kSigmoid: return at::sigmoid(x);
    case Activation::kLinear: return x;
  }
  return x;
}

at::Tensor LinearInDType(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const at::Tensor input = x.to(weight.scalar_type());
  if (CpuSgemmApplies(input, weight)) return CpuSgemmLinear(input, weight, bias);
  return at::linear(input, weight, bias);
}

DenseImpl::DenseImpl(int64_t in_features, int64_t out_features, bool with_bias) {
  weight = register_parameter("weight", at::zeros({out_features, in_features}),
                              /*requires_grad=*/false);
  if (with_bias) bias = register_parameter("bias", at::zeros({out_features}), false);
}

at::Tensor DenseImpl::forward(const at::Tensor& x) const {
  TORCH_CHECK(!fused_gelu_, "a layer with GELU fused runs through ActivatedInComputeDType");
  if (int8_.defined()) return int8_.forward(x);
  if (packed_.defined()) return packed_.Forward(x, at::kFloat);
  return ForwardInComputeDType(x).to(at::kFloat);
}

at::Tensor DenseImpl::ForwardInComputeDType(const at::Tensor& x) const {
  TORCH_CHECK(!fused_gelu_, "a layer with GELU fused runs through ActivatedInComputeDType");
  return ProductInComputeDType(x);
}

at::Tensor DenseImpl::ActivatedInComputeDType(const at::Tensor& x, Activation activation) const {
  if (fused_gelu_) {
    TORCH_CHECK(activation == Activation::kGelu, "this layer was packed with GELU fused");
    return ProductInComputeDType(x);
  }
  return Activate(activation, ProductInComputeDType(x));
}

at::Tensor DenseImpl::ProductInComputeDType(const at::Tensor& x) const {
  // int8 layers feed int8 layers or float32 residuals, which take float32.
  if (int8_.defined()) return int8_.forward(x);
  if (packed_.defined()) return packed_.Forward(x, compute_dtype_);
  if (compute_weight_.defined()) return LinearInDType(x, compute_weight_, compute_bias_);
  return LinearInDType(x, weight, bias);
}

void DenseImpl::SetComputeDType(at::ScalarType dtype) {
  compute_dtype_ = dtype;
  compute_weight_ = weight.to(dtype);
  if (bias.defined()) compute_bias_ = bias.to(dtype);
}

void DenseImpl::KeepOnlyComputeCopy() {
  // set_data: the registered parameter and this member are one tensor, so
  // both now share the copy's storage and the float32 storage is freed.
  if (compute_weight_.defined()) weight.set_data(compute_weight_);
  if (compute_bias_.defined()) bias.set_data(compute_bias_);
}

void DenseImpl::Release() {
  weight.set_data(at::empty({0}, weight.options()));
  if (bias.defined()) bias.set_data(at::empty({0}, bias.options()));
  compute_weight_ = at::Tensor();
  compute_bias_ = at::Tensor();
}

void DenseImpl::QuantizeToInt8(Activation then) {
  int8_ = Int8Linear::Pack(weight, bias, /*gelu=*/then == Activation::kGelu);
  fused_gelu_ = int8_.applies_gelu();
  Release();
}

void DenseImpl::PackForCpu(Activation then) {
  if (int8_.defined() || packed_.defined()) return;
  const at::Tensor& w = compute_weight_.defined() ? compute_weight_ : weight;
  const at::Tensor& b = compute_weight_.defined() ? compute_bias_ : bias;
  if (!w.defined() || w.numel() == 0) return;  // Released: folded elsewhere.
  packed_ = PackedLinear::Pack(w, b, /*gelu=*/then == Activation::kGelu);
  if (!packed_.defined()) return;
  fused_gelu_ = packed_.applies_gelu();
  Release();
}

void DenseImpl::PrepareRowGrid(bool in_compute_dtype) const {
  if (int8_.defined()) int8_.PrepareRowGrid(at::kFloat);  // Either caller takes float32 from it.
  if (packed_.defined()) packed_.PrepareRowGrid(in_compute_dtype ? compute_dtype_ : at::kFloat);
}

NormImpl::NormImpl(int64_t size, double eps) : eps_(eps) {
  weight = register_parameter("weight", at::ones({size}), /*requires_grad=*/false);
  bias = register_parameter("bias", at::zeros({size}), /*requires_grad=*/false);
}

at::Tensor NormImpl::forward(const at::Tensor& x) const {
  return at::layer_norm(x, {weight.size(0)}, weight, bias, eps_);
}

EmbeddingImpl::EmbeddingImpl(int64_t rows, int64_t width) {
  weight = register_parameter("weight", at::zeros({rows, width}), /*requires_grad=*/false);
}

at::Tensor EmbeddingImpl::forward(const at::Tensor& ids) const {
  return at::embedding(weight, ids).to(at::kFloat);  // A no-op for a float32 table.
}

}  // namespace deberta::model
