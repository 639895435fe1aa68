// The DeBERTa encoder (docs/deberta-model.md sections 5 and 7): the relative-embedding table
// (optionally layer-normed), N encoder layers and the optional ConvLayer
// after the first. Checkpoint scope "encoder".
#ifndef DEBERTA_MODEL_TORCH_ENCODER_H_
#define DEBERTA_MODEL_TORCH_ENCODER_H_

#include <torch/nn/modules/container/modulelist.h>

#include <vector>

#include "absl/status/statusor.h"
#include "model/torch/encoder_layer.h"
#include "model/torch/live_rows.h"

namespace deberta::model {

// v2 ConvLayer (docs/deberta-model.md section 7.1). Checkpoint scope "encoder.conv".
class ConvLayerImpl : public torch::nn::Module {
 public:
  explicit ConvLayerImpl(const DebertaConfig& config);
  // embeddings: the masked embedding output x0; layer_output: layer 1's.
  at::Tensor forward(const at::Tensor& embeddings, const at::Tensor& layer_output,
                     const at::Tensor& mask) const;

  // "conv.weight" [H, H/groups, k] and "conv.bias" live in a child "conv".
  struct ConvImpl : torch::nn::Module {
    ConvImpl(int64_t channels, int64_t groups, int64_t kernel);
    at::Tensor weight, bias;
  };
  std::shared_ptr<ConvImpl> conv;
  Norm LayerNorm{nullptr};  // Named as in checkpoints.

 private:
  Activation activation_;
  int64_t groups_;
  int64_t kernel_;
};
TORCH_MODULE(ConvLayer);

class EncoderImpl : public torch::nn::Module {
 public:
  explicit EncoderImpl(const DebertaConfig& config);

  // Computes the normalized relative table and prepares every layer.
  void Prepare(at::ScalarType compute_dtype);
  // After Prepare: every layer's linear products in int8.
  void QuantizeLayersToInt8();
  // After Prepare (and QuantizeLayersToInt8 if any): the attention's q/k/v
  // products and the intermediate dense (its activation fused) on weights
  // packed for oneDNN's CPU kernels where they apply.
  void PackLayersForCpu();

  // Runs the layers on the embedding output. Returns h_0..h_N (index 0 the
  // embeddings, docs/deberta-model.md section 7) when `keep_all`, else only {h_(N-1), h_N}.
  // Before each third of a layer (attention, the feed-forward's up and its
  // down product), rows no longer wanted are dropped (LiveRows::DropUnwanted):
  // the states returned, `ctx.padding` and `live` then hold only
  // live.rows(); BatchStoppedError when none is left.
  // With `first_position_only`, the last layer computes position 0 alone
  // (its queries; keys and values from every position), so h_N is [B, 1,
  // H]: all a classifier reads, for about a sixth of a layer's work.
  absl::StatusOr<std::vector<at::Tensor>> forward(const at::Tensor& embeddings, AttentionContext& ctx,
                                                  LiveRows& live, bool keep_all,
                                                  bool first_position_only = false) const;

  // Layer k (0-based) with separate query and key/value sources (for EMD).
  at::Tensor RunLayer(int64_t k, const at::Tensor& query_states,
                      const at::Tensor& key_value_states, const AttentionContext& ctx) const;

  // Makes oneDNN's kernels for the batch shapes (of at most `max_length`
  // tokens per sequence) whose first batch would pay most for them
  // (docs/server.md, "Warm-up"): the linear products' primitives for each
  // row count of WarmedRowCounts (row_grid.h) in layer 0 and in the last
  // layer (its queries apart from keys and values, EMD's), made, not run;
  // with `every_length`, for each length up to 128 tokens, its CPU attention
  // primitives (made, not run) and, queries at position 0 alone, the last
  // layer's attention run on zeros (kFirstOnly: LibTorch's products make
  // theirs when they run). CPU only. Throws as forward does.
  void WarmUpKernels(const DebertaConfig& config, int64_t max_length, bool every_length) const;

  // The relative table every layer uses, after its LayerNorm [2S, H].
  const at::Tensor& relative_table() const { return relative_table_; }

  torch::nn::ModuleList layer{nullptr};
  Embedding rel_embeddings{nullptr};
  Norm LayerNorm{nullptr};  // Named as in checkpoints (norm_rel_ebd).
  ConvLayer conv{nullptr};

 private:
  std::vector<EncoderLayer> layers_;
  at::Tensor relative_table_;
};
TORCH_MODULE(Encoder);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_ENCODER_H_
