// ContextPooler.
#include "model/torch/heads/classification_head.h"

#include <ATen/ATen.h>

namespace deberta::model {

ContextPoolerImpl::ContextPoolerImpl(const DebertaConfig& config)
    : activation_(ActivationFromName(config.pooler_hidden_act)) {
  dense = register_module("dense",
                          Dense(config.hidden_size, config.pooler_hidden_size, /*with_bias=*/true));
}

at::Tensor ContextPoolerImpl::forward(const at::Tensor& hidden_states) const {
  return Activate(activation_, dense->forward(hidden_states.select(1, 0)));
}

}  // namespace deberta::model
