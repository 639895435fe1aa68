// The whole network: the DeBERTa backbone (checkpoint scope "deberta") and
// the heads a checkpoint carries ("pooler" + "classifier",
// "lm_predictions"), with the Enhanced Mask Decoder of docs/deberta-model.md section 9.2.
// named_parameters() of DebertaNetwork are exactly the checkpoint's names,
// so it is the loading map.
#ifndef DEBERTA_MODEL_TORCH_DEBERTA_MODEL_H_
#define DEBERTA_MODEL_TORCH_DEBERTA_MODEL_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/engine.h"
#include "model/torch/embeddings.h"
#include "model/torch/encoder.h"
#include "model/torch/heads/classification_head.h"
#include "model/torch/heads/mlm_head.h"

namespace deberta::model {

// Checkpoint scope "deberta": the backbone.
class DebertaModelImpl : public torch::nn::Module {
 public:
  DebertaModelImpl(const DebertaConfig& config, bool with_position_table);
  Embeddings embeddings{nullptr};
  Encoder encoder{nullptr};
};
TORCH_MODULE(DebertaModel);

// Which optional parts a checkpoint has; decides which parameters exist.
struct NetworkParts {
  bool classifier = false;      // pooler.* + classifier.*
  bool mlm_head = false;        // lm_predictions.lm_head.*
  bool position_table = false;  // deberta.embeddings.position_embeddings
  // Token classification (docs/tasks.md 1.1): classifier.* on every
  // position, without a pooler; with `token_projection`, the authors'
  // NERModel's proj.* + GELU before it.
  bool token_classifier = false;
  bool token_projection = false;
};

// A padded batch on the model's device.
struct NetworkInputs {
  at::Tensor input_ids;       // [B, L] int64
  at::Tensor token_type_ids;  // [B, L] int64, or undefined
  at::Tensor mask;            // [B, L] float 0/1
  // Which rows are still wanted, asked between parts of the encoder
  // (LiveRows); null: every row, never asked.
  const Engine::RowsWanted* rows_wanted = nullptr;
};

// Which positions the encoder's last layer computes: all of them, or the
// first alone ([CLS]: all the classifier's pooler reads).
enum class LastLayerPositions { kAll, kFirstOnly };

// The encoder's output for a batch: what the heads take.
struct EncodedBatch {
  // {h_(N-1), h_N}, each [B', L, H] (h_N [B', 1, H] under
  // LastLayerPositions::kFirstOnly); row i is input row live.rows()[i].
  std::vector<at::Tensor> states;
  AttentionContext ctx;  // Its padding holds the rows live.rows().
  LiveRows live;
};

class DebertaNetworkImpl : public torch::nn::Module {
 public:
  DebertaNetworkImpl(const DebertaConfig& config, const NetworkParts& parts);

  // Call once after the weights are loaded and the module is on its device:
  // derives fused projections and position projections and keeps the
  // matrix-product weights in `compute_dtype` only (the float32 values and
  // the layers folded into the fused ones are dropped).
  // With `int8_encoder`, the encoder layers' linear products run in int8
  // (weights per output channel, activations quantized at run time); the
  // rest runs as `compute_dtype` has it (products in it; the embeddings,
  // scores, softmax, LayerNorm and residuals in float32). Last, on the CPU,
  // the float32/bfloat16 linear layers get weights packed for oneDNN's
  // blocked kernels (PackedLinear), where those apply.
  void Prepare(at::ScalarType compute_dtype, bool int8_encoder = false);

  // On the CPU, after Prepare: makes oneDNN's kernels for every batch
  // shape of at most `max_length` tokens per sequence, so that no first
  // batch of a shape pays for them (EncoderImpl::WarmUpKernels; every
  // length's attention only where its products run in bfloat16: float32's
  // kernels cost next to nothing to make). Throws as forward does.
  void WarmUpCpuKernels(int64_t max_length) const;

  // Whether fill-mask can use the Enhanced Mask Decoder (docs/deberta-model.md section 9.2: needs the
  // position table, no position-biased input, N >= 2 and E == H).
  bool CanRunEmd() const;

  // Embeddings and encoder, dropping the rows no longer wanted
  // (inputs.rows_wanted) on the way; BatchStoppedError when none is left.
  absl::StatusOr<EncodedBatch> Encode(const NetworkInputs& inputs,
                                      LastLayerPositions last = LastLayerPositions::kAll) const;
  // Embeddings and encoder of every row of a batch, under `relative`
  // (MakeRelativeGeometry for the batch's length): device work only, no
  // host copies and no row dropping, so a device graph can capture it.
  EncodedBatch EncodeForCapture(const NetworkInputs& inputs, const RelativeGeometry& relative) const;

  // [B', num_labels] classifier logits of the rows encoded.live.rows().
  at::Tensor ClassifierLogits(const EncodedBatch& encoded) const;
  // Encode (the last layer at the first position only), then the above;
  // `*rows` gets the input rows computed (all B unless inputs.rows_wanted
  // dropped some on the way).
  absl::StatusOr<at::Tensor> ClassifierLogits(const NetworkInputs& inputs, std::vector<int64_t>* rows) const;

  // The final hidden states [M', H] at the positions (batch_index[m],
  // position[m]) for m in `*entries` (every m whose row is still in
  // encoded.live.rows(), which EMD may reduce further), with or without
  // EMD: what the LM head takes. Callers apply MaskedLmHead to them in
  // chunks of rows. BatchStoppedError if EMD finds no row wanted.
  absl::StatusOr<at::Tensor> MaskedLmStates(EncodedBatch& encoded, bool emd, const std::vector<int64_t>& batch_index,
                                            const std::vector<int64_t>& position,
                                            std::vector<int64_t>* entries) const;
  // Encode, then the above.
  absl::StatusOr<at::Tensor> MaskedLmStates(const NetworkInputs& inputs, bool emd,
                                            const std::vector<int64_t>& batch_index,
                                            const std::vector<int64_t>& position,
                                            std::vector<int64_t>* entries) const;
  // LM head: [m, H] states -> [m, V] float32 logits.
  at::Tensor MaskedLmHead(const at::Tensor& states) const;

  // Token classification (docs/tasks.md 1.1): [B', L, num_labels] float32
  // logits at every position of the rows encoded.live.rows(), from the
  // last layer (no pooler, no EMD): classifier(h), or with the authors'
  // head classifier(gelu(proj(h))).
  at::Tensor TokenClassifierLogits(const EncodedBatch& encoded) const;

  // Every intermediate named in the golden README that the network has:
  // hidden_states.k, last_hidden_state, relative_pos, c2p_index,
  // rel_embeddings, pooled_output, classifier_logits, mlm_logits_no_emd,
  // emd_z_states, emd_query_init, emd_hidden_states.1/.2, emd_final,
  // mlm_logits_emd. For checking against a reference; slow.
  //
  // With `wanted`, computes only what those names need (the encoder
  // always; every layer's states, the heads and EMD only when asked) and
  // returns those names and the intermediates computed on the way; names
  // it does not know are ignored (TraceNames lists the known ones).
  std::map<std::string, at::Tensor> Trace(const NetworkInputs& inputs,
                                          const std::set<std::string>* wanted = nullptr) const;
  // The names Trace returns for this network, without running it.
  std::set<std::string> TraceNames() const;

  const DebertaConfig& config() const { return config_; }
  const NetworkParts& parts() const { return parts_; }

  DebertaModel deberta{nullptr};
  ContextPooler pooler{nullptr};
  Dense classifier{nullptr};  // The sequence classifier's, or the token classifier's.
  Dense proj{nullptr};        // The authors' NER head's projection, named as they save it.
  LmPredictions lm_predictions{nullptr};

 private:
  // Every linear layer of the network (encoder, pooler, classifier, LM
  // head transform), for Prepare's steps.
  std::vector<DenseImpl*> DenseLayers();
  // EMD's two passes of the last layer (docs/deberta-model.md section 9.2); `second_to_last` is
  // h_(N-1). Fills `trace` with its intermediates when not null. Rows no
  // longer wanted are dropped before each pass, as in the encoder: the
  // result, `ctx.padding` and `live` then hold only live.rows().
  absl::StatusOr<at::Tensor> EnhancedMaskDecoder(const at::Tensor& second_to_last, AttentionContext& ctx,
                                                 LiveRows& live, std::map<std::string, at::Tensor>* trace) const;
  // Embeddings and encoder under `ctx` and `live`: every layer's states
  // when `keep_all`, else {h_(N-1), h_N}.
  absl::StatusOr<std::vector<at::Tensor>> RunEncoder(const NetworkInputs& inputs, AttentionContext& ctx,
                                                     LiveRows& live, bool keep_all,
                                                     LastLayerPositions last = LastLayerPositions::kAll) const;

  DebertaConfig config_;
  NetworkParts parts_;
  at::ScalarType compute_dtype_ = at::kFloat;  // Prepare's.
};
TORCH_MODULE(DebertaNetwork);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_DEBERTA_MODEL_H_
