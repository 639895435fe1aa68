// Int8Linear on LibTorch's quantized::linear_prepack and the packed
// weights' dynamic-quantization forward.
#include "model/torch/int8_linear.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/quantized/PackedParams.h>

#include <algorithm>

namespace deberta::model {

struct Int8Linear::Packed {
  c10::intrusive_ptr<LinearPackedParamsBase> params;
};

absl::Status UseOnednnQuantizedEngine() {
  const auto& engines = at::globalContext().supportedQEngines();
  if (std::find(engines.begin(), engines.end(), at::QEngine::ONEDNN) == engines.end()) {
    return absl::FailedPreconditionError("int8 needs LibTorch's oneDNN quantized engine, which this build lacks");
  }
  at::globalContext().setQEngine(at::QEngine::ONEDNN);
  return absl::OkStatus();
}

at::ScalarType Int8ComputeDType() {
  return __builtin_cpu_supports("avx512bf16") ? at::kBFloat16 : at::kFloat;
}

Int8Linear Int8Linear::Pack(const at::Tensor& weight, const at::Tensor& bias) {
  const at::Tensor w = weight.to(at::kFloat).contiguous();
  // Symmetric per output channel (oneDNN requires zero points of 0); a
  // channel of zeros keeps a tiny scale instead of dividing by zero.
  const at::Tensor scales = std::get<0>(w.abs().max(/*dim=*/1)).div(127.0).clamp_min(1e-12).to(at::kDouble);
  const at::Tensor zero_points = at::zeros({w.size(0)}, at::kLong);
  const at::Tensor quantized = at::quantize_per_channel(w, scales, zero_points, /*axis=*/0, at::kQInt8);
  static const auto prepack =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("quantized::linear_prepack", "")
          .typed<c10::intrusive_ptr<LinearPackedParamsBase>(at::Tensor, c10::optional<at::Tensor>)>();
  // A copy: the packed weights keep the tensor they are given, and the
  // caller may empty its own (DenseImpl::Release changes it in place).
  const c10::optional<at::Tensor> float_bias =
      bias.defined() ? c10::optional<at::Tensor>(bias.to(at::kFloat).clone()) : c10::nullopt;
  Int8Linear linear;
  linear.packed_ = std::make_shared<const Packed>(Packed{prepack.call(quantized, float_bias)});
  return linear;
}

at::Tensor Int8Linear::forward(const at::Tensor& x) const {
  // Activations: one scale per call from their range, on the full 8 bits
  // (VNNI has no overflow for reduce_range to avoid).
  return packed_->params->apply_dynamic(x.to(at::kFloat).contiguous(), /*reduce_range=*/false);
}

}  // namespace deberta::model
