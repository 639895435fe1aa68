// Masked-LM head.
#include "model/torch/heads/mlm_head.h"

#include <ATen/ATen.h>

namespace deberta::model {

LmHeadImpl::LmHeadImpl(const DebertaConfig& config)
    : activation_(ActivationFromName(config.hidden_act)) {
  dense = register_module("dense",
                          Dense(config.hidden_size, config.embedding_size, /*with_bias=*/true));
  LayerNorm = register_module("LayerNorm", Norm(config.embedding_size, config.layer_norm_eps));
  bias = register_parameter("bias", at::zeros({config.vocab_size}), /*requires_grad=*/false);
}

void LmHeadImpl::Prepare(const at::Tensor& word_embeddings, at::ScalarType compute_dtype) {
  decoder_weight_ = word_embeddings.to(compute_dtype);
  decoder_bias_ = bias.to(compute_dtype);
}

at::Tensor LmHeadImpl::forward(const at::Tensor& hidden_states) const {
  at::Tensor t = LayerNorm->forward(Activate(activation_, dense->forward(hidden_states)));
  return LinearInDType(t, decoder_weight_, decoder_bias_).to(at::kFloat);
}

LmPredictionsImpl::LmPredictionsImpl(const DebertaConfig& config) {
  lm_head = register_module("lm_head", LmHead(config));
}

}  // namespace deberta::model
