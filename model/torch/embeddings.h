// DeBERTa embeddings (docs/deberta-model.md section 3): word (+ token type) (+ absolute
// position) embeddings, optional projection E -> H, LayerNorm, times the
// mask. Checkpoint scope "embeddings".
#ifndef DEBERTA_MODEL_TORCH_EMBEDDINGS_H_
#define DEBERTA_MODEL_TORCH_EMBEDDINGS_H_

#include "model/config.h"
#include "model/torch/layers.h"

namespace deberta::model {

class EmbeddingsImpl : public torch::nn::Module {
 public:
  // `with_position_table`: register position_embeddings. Required when
  // position_biased_input; otherwise only EMD uses it.
  EmbeddingsImpl(const DebertaConfig& config, bool with_position_table);

  // input_ids [B, L] int64, token_type_ids [B, L] int64 (may be undefined),
  // mask [B, L] float 0/1 -> [B, L, H].
  at::Tensor forward(const at::Tensor& input_ids, const at::Tensor& token_type_ids,
                     const at::Tensor& mask) const;

  Embedding word_embeddings{nullptr};
  Embedding position_embeddings{nullptr};
  Embedding token_type_embeddings{nullptr};
  Dense embed_proj{nullptr};
  Norm LayerNorm{nullptr};  // Named as in checkpoints.

 private:
  DebertaConfig config_;
};
TORCH_MODULE(Embeddings);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_EMBEDDINGS_H_
