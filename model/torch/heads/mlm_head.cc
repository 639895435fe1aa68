// Masked-LM head.
#include "model/torch/heads/mlm_head.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

namespace deberta::model {

LmHeadImpl::LmHeadImpl(const DebertaConfig& config)
    : activation_(ActivationFromName(config.hidden_act)) {
  dense = register_module("dense",
                          Dense(config.hidden_size, config.embedding_size, /*with_bias=*/true));
  LayerNorm = register_module("LayerNorm", Norm(config.embedding_size, config.layer_norm_eps));
  bias = register_parameter("bias", at::zeros({config.vocab_size}), /*requires_grad=*/false);
}

void LmHeadImpl::Prepare(const at::Tensor& word_embeddings, at::ScalarType compute_dtype) {
  const bool narrow_table = compute_dtype == at::kFloat && word_embeddings.scalar_type() == at::kBFloat16;
  decoder_weight_ = narrow_table ? word_embeddings : word_embeddings.to(compute_dtype);
  decoder_bias_ = bias.to(compute_dtype);
}

at::Tensor LmHeadImpl::forward(const at::Tensor& hidden_states) const {
  at::Tensor t = LayerNorm->forward(Activate(activation_, dense->forward(hidden_states)));
  // (The bias is in the compute dtype; a table that is not, is widened.)
  if (decoder_weight_.scalar_type() != decoder_bias_.scalar_type()) return WidenedDecoder(t);
  return LinearInDType(t, decoder_weight_, decoder_bias_).to(at::kFloat);
}

at::Tensor LmHeadImpl::WidenedDecoder(const at::Tensor& t) const {
  // Blocks of 2,048 rows (3 MiB widened): each is widened while it is in
  // cache and multiplied at once, so the products are float32's with the
  // table's bfloat16 values, without a float32 copy of the table (393 MB
  // for deberta-v3's 128k x 768).
  constexpr int64_t kRows = 2048;
  const int64_t vocab = decoder_weight_.size(0);
  const at::Tensor x = t.reshape({-1, t.size(-1)});
  at::Tensor out = at::empty({x.size(0), vocab}, x.options());
  for (int64_t start = 0; start < vocab; start += kRows) {
    const int64_t rows = std::min(kRows, vocab - start);
    const at::Tensor block = decoder_weight_.narrow(0, start, rows).to(at::kFloat);
    out.narrow(1, start, rows).copy_(LinearInDType(x, block, decoder_bias_.narrow(0, start, rows)));
  }
  std::vector<int64_t> sizes = t.sizes().vec();
  sizes.back() = vocab;
  return out.view(sizes);
}

LmPredictionsImpl::LmPredictionsImpl(const DebertaConfig& config) {
  lm_head = register_module("lm_head", LmHead(config));
}

}  // namespace deberta::model
