// One post-LN transformer layer of DeBERTa (docs/deberta-model.md section 7): attention,
// intermediate (FFN up-projection + activation), output (down-projection,
// residual, LayerNorm). Checkpoint scope "encoder.layer.{i}".
#ifndef DEBERTA_MODEL_TORCH_ENCODER_LAYER_H_
#define DEBERTA_MODEL_TORCH_ENCODER_LAYER_H_

#include "model/torch/disentangled_attention.h"

namespace deberta::model {

class IntermediateImpl : public torch::nn::Module {
 public:
  explicit IntermediateImpl(const DebertaConfig& config);
  Dense dense{nullptr};
};
TORCH_MODULE(Intermediate);

class LayerOutputImpl : public torch::nn::Module {
 public:
  explicit LayerOutputImpl(const DebertaConfig& config);
  Dense dense{nullptr};
  Norm LayerNorm{nullptr};  // Named as in checkpoints.
};
TORCH_MODULE(LayerOutput);

class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const DebertaConfig& config);
  // Queries from `query_states`, keys and values from `key_value_states`.
  at::Tensor forward(const at::Tensor& query_states, const at::Tensor& key_value_states,
                     const AttentionContext& ctx) const;
  // The layer's second half: intermediate, activation, output, on the
  // attention's output (forward = FeedForward(attention->forward(...))).
  at::Tensor FeedForward(const at::Tensor& attention_output) const;
  // FeedForward in its two matrix products, so that the encoder can drop
  // rows between them: FeedForward(a) = FeedForwardDown(FeedForwardUp(a), a).
  // Up: the activated intermediate [B, L, I] in the compute dtype.
  at::Tensor FeedForwardUp(const at::Tensor& attention_output) const;
  // Down: output dense, residual (the attention's output), LayerNorm.
  at::Tensor FeedForwardDown(const at::Tensor& up, const at::Tensor& attention_output) const;

  // hidden_act: what follows the intermediate dense.
  Activation activation() const { return activation_; }

  Attention attention{nullptr};
  Intermediate intermediate{nullptr};
  LayerOutput output{nullptr};

 private:
  Activation activation_;
};
TORCH_MODULE(EncoderLayer);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_ENCODER_LAYER_H_
