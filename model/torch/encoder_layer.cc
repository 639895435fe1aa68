// DeBERTa encoder layer.
#include "model/torch/encoder_layer.h"

#include <ATen/ATen.h>

namespace deberta::model {

IntermediateImpl::IntermediateImpl(const DebertaConfig& config) {
  dense = register_module("dense", Dense(config.hidden_size, config.intermediate_size, true));
}

LayerOutputImpl::LayerOutputImpl(const DebertaConfig& config) {
  dense = register_module("dense", Dense(config.intermediate_size, config.hidden_size, true));
  LayerNorm = register_module("LayerNorm", Norm(config.hidden_size, config.layer_norm_eps));
}

EncoderLayerImpl::EncoderLayerImpl(const DebertaConfig& config)
    : activation_(ActivationFromName(config.hidden_act)) {
  attention = register_module("attention", Attention(config));
  intermediate = register_module("intermediate", Intermediate(config));
  output = register_module("output", LayerOutput(config));
}

at::Tensor EncoderLayerImpl::forward(const at::Tensor& query_states,
                                     const at::Tensor& key_value_states,
                                     const AttentionContext& ctx) const {
  return FeedForward(attention->forward(query_states, key_value_states, ctx));
}

at::Tensor EncoderLayerImpl::FeedForward(const at::Tensor& attention_output) const {
  return FeedForwardDown(FeedForwardUp(attention_output), attention_output);
}

at::Tensor EncoderLayerImpl::FeedForwardUp(const at::Tensor& attention_output) const {
  // The FFN's wide activation stays in the compute dtype between its two
  // matrix products.
  return intermediate->dense->ActivatedInComputeDType(attention_output, activation_);
}

at::Tensor EncoderLayerImpl::FeedForwardDown(const at::Tensor& up,
                                             const at::Tensor& attention_output) const {
  return output->LayerNorm->forward(output->dense->forward(up).add_(attention_output));
}

}  // namespace deberta::model
