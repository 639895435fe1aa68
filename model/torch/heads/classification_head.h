// Sequence-classification head (docs/deberta-model.md section 8): ContextPooler on token 0
// ("pooler.dense") followed by the classifier ("classifier").
#ifndef DEBERTA_MODEL_TORCH_HEADS_CLASSIFICATION_HEAD_H_
#define DEBERTA_MODEL_TORCH_HEADS_CLASSIFICATION_HEAD_H_

#include "model/config.h"
#include "model/torch/layers.h"

namespace deberta::model {

// Checkpoint scope "pooler".
class ContextPoolerImpl : public torch::nn::Module {
 public:
  explicit ContextPoolerImpl(const DebertaConfig& config);
  // act(dense(hidden[:, 0])) -> [B, H].
  at::Tensor forward(const at::Tensor& hidden_states) const;
  Dense dense{nullptr};

 private:
  Activation activation_;
};
TORCH_MODULE(ContextPooler);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_HEADS_CLASSIFICATION_HEAD_H_
