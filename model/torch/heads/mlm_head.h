// Masked-LM head of the authors' layout (docs/deberta-model.md section 9.1), checkpoint scope
// "lm_predictions.lm_head": dense H -> E, activation, LayerNorm over E, then
// the word-embedding matrix (tied, not stored) and a vocabulary bias.
#ifndef DEBERTA_MODEL_TORCH_HEADS_MLM_HEAD_H_
#define DEBERTA_MODEL_TORCH_HEADS_MLM_HEAD_H_

#include "model/config.h"
#include "model/torch/layers.h"

namespace deberta::model {

class LmHeadImpl : public torch::nn::Module {
 public:
  explicit LmHeadImpl(const DebertaConfig& config);
  // Keeps the tied decoder matrix [V, E] in `compute_dtype`; a table held
  // in bfloat16 under float32 products (int8 engines: DebertaNetwork::
  // Prepare) is shared as it is and widened a block of rows at a time.
  void Prepare(const at::Tensor& word_embeddings, at::ScalarType compute_dtype);
  // [..., H] -> [..., V] logits.
  at::Tensor forward(const at::Tensor& hidden_states) const;

  Dense dense{nullptr};
  Norm LayerNorm{nullptr};  // Named as in checkpoints.
  at::Tensor bias;          // [V]

 private:
  // Logits of `t` (float32) against the bfloat16 decoder matrix, in float32.
  at::Tensor WidenedDecoder(const at::Tensor& t) const;

  Activation activation_;
  at::Tensor decoder_weight_;
  at::Tensor decoder_bias_;
};
TORCH_MODULE(LmHead);

// Checkpoint scope "lm_predictions" (holds only "lm_head").
class LmPredictionsImpl : public torch::nn::Module {
 public:
  explicit LmPredictionsImpl(const DebertaConfig& config);
  LmHead lm_head{nullptr};
};
TORCH_MODULE(LmPredictions);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_HEADS_MLM_HEAD_H_
