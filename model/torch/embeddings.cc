// DeBERTa embeddings.
#include "model/torch/embeddings.h"

#include <ATen/ATen.h>

namespace deberta::model {

EmbeddingsImpl::EmbeddingsImpl(const DebertaConfig& config, bool with_position_table)
    : config_(config) {
  const int64_t e = config.embedding_size;
  word_embeddings = register_module("word_embeddings", Embedding(config.vocab_size, e));
  if (with_position_table) {
    position_embeddings =
        register_module("position_embeddings", Embedding(config.max_position_embeddings, e));
  }
  if (config.type_vocab_size > 0) {
    token_type_embeddings =
        register_module("token_type_embeddings", Embedding(config.type_vocab_size, e));
  }
  if (e != config.hidden_size) {
    embed_proj = register_module("embed_proj", Dense(e, config.hidden_size, /*with_bias=*/false));
  }
  LayerNorm = register_module("LayerNorm", Norm(config.hidden_size, config.layer_norm_eps));
}

at::Tensor EmbeddingsImpl::forward(const at::Tensor& input_ids, const at::Tensor& token_type_ids,
                                   const at::Tensor& mask) const {
  at::Tensor e = word_embeddings->forward(input_ids);
  // Token types are ignored entirely without a segment table (docs/deberta-model.md section 12.7).
  if (token_type_embeddings && token_type_ids.defined()) {
    e = e + token_type_embeddings->forward(token_type_ids);
  }
  if (config_.position_biased_input) {
    e = e + position_embeddings->weight.narrow(0, 0, input_ids.size(1)).unsqueeze(0);
  }
  if (embed_proj) e = embed_proj->forward(e);
  return LayerNorm->forward(e) * mask.unsqueeze(-1);
}

}  // namespace deberta::model
