// DeBERTa backbone, heads and Enhanced Mask Decoder.
#include "model/torch/deberta_model.h"

#include <ATen/ATen.h>

#include "absl/strings/str_cat.h"
#include "model/status_macros.h"
#include "model/torch/relative_position.h"

namespace deberta::model {

DebertaModelImpl::DebertaModelImpl(const DebertaConfig& config, bool with_position_table) {
  embeddings = register_module("embeddings", Embeddings(config, with_position_table));
  encoder = register_module("encoder", Encoder(config));
}

DebertaNetworkImpl::DebertaNetworkImpl(const DebertaConfig& config, const NetworkParts& parts)
    : config_(config), parts_(parts) {
  deberta = register_module(
      "deberta", DebertaModel(config, parts.position_table || config.position_biased_input));
  if (parts.classifier) {
    pooler = register_module("pooler", ContextPooler(config));
    classifier = register_module(
        "classifier", Dense(config.pooler_hidden_size, static_cast<int64_t>(config.labels.size()),
                            /*with_bias=*/true));
  } else if (parts.token_classifier) {
    if (parts.token_projection) {
      proj = register_module("proj", Dense(config.hidden_size, config.hidden_size, /*with_bias=*/true));
    }
    classifier = register_module(
        "classifier", Dense(config.hidden_size, static_cast<int64_t>(config.labels.size()), /*with_bias=*/true));
  }
  if (parts.mlm_head) lm_predictions = register_module("lm_predictions", LmPredictions(config));
}

std::vector<DenseImpl*> DebertaNetworkImpl::DenseLayers() {
  std::vector<DenseImpl*> dense;
  for (const auto& module : modules(/*include_self=*/false)) {
    if (auto* layer = dynamic_cast<DenseImpl*>(module.get())) dense.push_back(layer);
  }
  return dense;
}

void DebertaNetworkImpl::Prepare(at::ScalarType compute_dtype, bool int8_encoder) {
  compute_dtype_ = compute_dtype;
  const std::vector<DenseImpl*> dense = DenseLayers();
  // 1. Derived weights, from the float32 ones: the fused projections, the
  //    position projections, the tied LM head, each in the compute dtype.
  for (DenseImpl* layer : dense) layer->SetComputeDType(compute_dtype);
  // The word embeddings, the largest table (128k x 768 in deberta-v3:
  // 393 MB in float32), in the compute dtype like every other weight, and
  // shared with the tied LM head below rather than held twice (float32
  // for the lookup and a compute-dtype copy for the head). Looked-up rows
  // are widened to float32 (EmbeddingImpl::forward). int8 engines whose
  // other products are float32 hold it in bfloat16 all the same (-196 MB
  // for deberta-v3): its rows are LayerNorm's input, where bfloat16's
  // rounding is well inside what int8's products round away, and the LM
  // head widens it a block at a time (LmHead::Prepare).
  Embedding& words = deberta->embeddings->word_embeddings;
  const at::ScalarType table_dtype = int8_encoder && compute_dtype == at::kFloat ? at::kBFloat16 : compute_dtype;
  if (table_dtype != at::kFloat) words->weight.set_data(words->weight.to(table_dtype));
  deberta->encoder->Prepare(compute_dtype);
  if (lm_predictions) {
    lm_predictions->lm_head->Prepare(deberta->embeddings->word_embeddings->weight, compute_dtype);
  }
  // 2. Every derived tensor is made: the linear layers keep one copy, in
  //    the compute dtype (on a GPU in fp16/bf16, half the weight memory).
  for (DenseImpl* layer : dense) layer->KeepOnlyComputeCopy();
  // 3. int8 quantizes the encoder layers from those copies.
  if (int8_encoder) deberta->encoder->QuantizeLayersToInt8();
  // 4. Packing drops the plain weights, so it comes last. The encoder
  //    first: its intermediate layers pack with their activation fused.
  deberta->encoder->PackLayersForCpu();
  for (DenseImpl* layer : dense) layer->PackForCpu();
}

void DebertaNetworkImpl::WarmUpCpuKernels(int64_t max_length) const {
  deberta->encoder->WarmUpKernels(config_, max_length, /*every_length=*/compute_dtype_ == at::kBFloat16);
  // The heads' products (their rows: one per sequence or per prediction).
  for (const Dense& head : {pooler ? pooler->dense : Dense{nullptr}, classifier, proj}) {
    if (head) head->PrepareRowGrid();
  }
}

bool DebertaNetworkImpl::CanRunEmd() const {
  return !config_.position_biased_input && deberta->embeddings->position_embeddings &&
         config_.num_hidden_layers >= 2 && config_.embedding_size == config_.hidden_size;
}

absl::StatusOr<std::vector<at::Tensor>> DebertaNetworkImpl::RunEncoder(const NetworkInputs& inputs,
                                                                       AttentionContext& ctx, LiveRows& live,
                                                                       bool keep_all, LastLayerPositions last) const {
  at::Tensor x0 = deberta->embeddings->forward(inputs.input_ids, inputs.token_type_ids, inputs.mask);
  return deberta->encoder->forward(x0, ctx, live, keep_all, last == LastLayerPositions::kFirstOnly);
}

absl::StatusOr<EncodedBatch> DebertaNetworkImpl::Encode(const NetworkInputs& inputs, LastLayerPositions last) const {
  EncodedBatch encoded;
  encoded.ctx = MakeAttentionContext(config_, inputs.mask);
  encoded.live = LiveRows(inputs.mask.size(0), inputs.rows_wanted);
  DEBERTA_ASSIGN_OR_RETURN(encoded.states,
                           RunEncoder(inputs, encoded.ctx, encoded.live, /*keep_all=*/false, last));
  return encoded;
}

EncodedBatch DebertaNetworkImpl::EncodeForCapture(const NetworkInputs& inputs,
                                                  const RelativeGeometry& relative) const {
  EncodedBatch encoded;
  encoded.ctx = {relative, MakeKeyPadding(inputs.mask)};
  encoded.live = LiveRows(inputs.mask.size(0), /*wanted=*/nullptr);
  // Nothing is asked without `wanted`, so nothing can stop it.
  absl::StatusOr<std::vector<at::Tensor>> states =
      RunEncoder(inputs, encoded.ctx, encoded.live, /*keep_all=*/false);
  TORCH_CHECK(states.ok(), "a forward that drops no row stopped: ", states.status().ToString());
  encoded.states = *std::move(states);
  return encoded;
}

at::Tensor DebertaNetworkImpl::ClassifierLogits(const EncodedBatch& encoded) const {
  return classifier->forward(pooler->forward(encoded.states.back()));
}

absl::StatusOr<at::Tensor> DebertaNetworkImpl::ClassifierLogits(const NetworkInputs& inputs,
                                                                std::vector<int64_t>* rows) const {
  DEBERTA_ASSIGN_OR_RETURN(EncodedBatch encoded, Encode(inputs, LastLayerPositions::kFirstOnly));
  *rows = encoded.live.rows();
  return ClassifierLogits(encoded);
}

absl::StatusOr<at::Tensor> DebertaNetworkImpl::EnhancedMaskDecoder(const at::Tensor& second_to_last,
                                                                   AttentionContext& ctx, LiveRows& live,
                                                                   std::map<std::string, at::Tensor>* trace) const {
  const int64_t batch = second_to_last.size(0), length = second_to_last.size(1);
  // Raw absolute position rows: no LayerNorm, mask or projection.
  at::Tensor z = deberta->embeddings->position_embeddings->weight.narrow(0, 0, length)
                     .unsqueeze(0)
                     .expand({batch, length, config_.hidden_size});
  at::Tensor query = z + second_to_last;
  if (trace) {
    (*trace)["emd_z_states"] = z.contiguous();
    (*trace)["emd_query_init"] = query;
  }
  const int64_t last = config_.num_hidden_layers - 1;
  // Two passes of the last layer; keys and values always from h_(N-1).
  at::Tensor key_value = second_to_last;
  for (int pass = 1; pass <= 2; ++pass) {
    DEBERTA_RETURN_IF_ERROR(live.DropUnwanted(&ctx.padding, {&query, &key_value}));
    query = deberta->encoder->RunLayer(last, query, key_value, ctx);
    if (trace) (*trace)[absl::StrCat("emd_hidden_states.", pass)] = query;
  }
  return query;
}

absl::StatusOr<at::Tensor> DebertaNetworkImpl::MaskedLmStates(const NetworkInputs& inputs, bool emd,
                                                              const std::vector<int64_t>& batch_index,
                                                              const std::vector<int64_t>& position,
                                                              std::vector<int64_t>* entries) const {
  DEBERTA_ASSIGN_OR_RETURN(EncodedBatch encoded, Encode(inputs));
  return MaskedLmStates(encoded, emd, batch_index, position, entries);
}

absl::StatusOr<at::Tensor> DebertaNetworkImpl::MaskedLmStates(EncodedBatch& encoded, bool emd,
                                                              const std::vector<int64_t>& batch_index,
                                                              const std::vector<int64_t>& position,
                                                              std::vector<int64_t>* entries) const {
  const std::vector<at::Tensor>& states = encoded.states;
  at::Tensor final_states = states.back();
  if (emd) {
    DEBERTA_ASSIGN_OR_RETURN(final_states,
                             EnhancedMaskDecoder(states[states.size() - 2], encoded.ctx, encoded.live, nullptr));
  }
  // The entries whose row is still computed, with that row's index now.
  // The live rows ascend, so the last is the largest input row.
  const std::vector<int64_t>& live = encoded.live.rows();
  std::vector<int64_t> current_row(live.empty() ? 0 : live.back() + 1, -1);
  for (size_t i = 0; i < live.size(); ++i) current_row[live[i]] = static_cast<int64_t>(i);
  std::vector<int64_t> rows, positions;
  entries->clear();
  for (size_t m = 0; m < batch_index.size(); ++m) {
    if (batch_index[m] >= static_cast<int64_t>(current_row.size()) || current_row[batch_index[m]] < 0) continue;
    entries->push_back(static_cast<int64_t>(m));
    rows.push_back(current_row[batch_index[m]]);
    positions.push_back(position[m]);
  }
  const auto count = static_cast<int64_t>(rows.size());
  const at::Tensor row_index = at::from_blob(rows.data(), {count}, at::kLong).to(final_states.device());
  const at::Tensor position_index =
      at::from_blob(positions.data(), {count}, at::kLong).to(final_states.device());
  // The LM head (a [*, V] product) runs only on the requested rows.
  return final_states.index({row_index, position_index});
}

at::Tensor DebertaNetworkImpl::MaskedLmHead(const at::Tensor& states) const {
  return lm_predictions->lm_head->forward(states);
}

at::Tensor DebertaNetworkImpl::TokenClassifierLogits(const EncodedBatch& encoded) const {
  at::Tensor h = encoded.states.back();
  if (proj) h = Activate(Activation::kGelu, proj->forward(h));
  return classifier->forward(h).to(at::kFloat);
}


namespace {

// EMD's intermediates and the output that needs them.
const char* const kEmdNames[] = {"emd_z_states", "emd_query_init", "emd_hidden_states.1", "emd_hidden_states.2",
                                 "emd_final", "mlm_logits_emd"};

}  // namespace

std::set<std::string> DebertaNetworkImpl::TraceNames() const {
  std::set<std::string> names{"last_hidden_state"};
  for (int64_t k = 0; k <= config_.num_hidden_layers; ++k) names.insert(absl::StrCat("hidden_states.", k));
  if (config_.relative_attention) names.insert({"relative_pos", "c2p_index", "rel_embeddings"});
  if (classifier) names.insert({"pooled_output", "classifier_logits"});
  if (lm_predictions) {
    names.insert("mlm_logits_no_emd");
    if (CanRunEmd()) names.insert(std::begin(kEmdNames), std::end(kEmdNames));
  }
  return names;
}

std::map<std::string, at::Tensor> DebertaNetworkImpl::Trace(const NetworkInputs& inputs,
                                                           const std::set<std::string>* wanted) const {
  const auto want = [wanted](const std::string& name) { return wanted == nullptr || wanted->count(name) > 0; };
  const auto want_any = [&want](std::initializer_list<std::string> names) {
    for (const std::string& name : names) {
      if (want(name)) return true;
    }
    return false;
  };
  bool every_layer = wanted == nullptr;
  for (int64_t k = 0; k <= config_.num_hidden_layers && !every_layer; ++k) {
    every_layer = want(absl::StrCat("hidden_states.", k));
  }
  bool emd = false;
  for (const char* name : kEmdNames) emd = emd || want(name);

  std::map<std::string, at::Tensor> trace;
  AttentionContext ctx = MakeAttentionContext(config_, inputs.mask);
  LiveRows live(inputs.mask.size(0), /*wanted=*/nullptr);  // Every row: nothing can stop the trace.
  // Without every layer's states, RunEncoder keeps the last two (EMD's input).
  absl::StatusOr<std::vector<at::Tensor>> encoded = RunEncoder(inputs, ctx, live, /*keep_all=*/every_layer);
  TORCH_CHECK(encoded.ok(), encoded.status().ToString());
  const std::vector<at::Tensor> states = *std::move(encoded);
  if (every_layer) {
    for (size_t k = 0; k < states.size(); ++k) trace[absl::StrCat("hidden_states.", k)] = states[k];
  }
  if (want("last_hidden_state")) trace["last_hidden_state"] = states.back();
  if (config_.relative_attention && want_any({"relative_pos", "c2p_index", "rel_embeddings"})) {
    const int64_t length = inputs.input_ids.size(1);
    std::vector<int64_t> rel = RelativePositionTable(length, config_.position_buckets,
                                                     config_.MaxRelativePositions());
    trace["relative_pos"] = at::from_blob(rel.data(), {length, length}, at::kLong).clone();
    trace["c2p_index"] = (ctx.relative.c2p_index + ctx.relative.first_row).cpu();
    trace["rel_embeddings"] = deberta->encoder->relative_table();
  }
  if (classifier && want_any({"pooled_output", "classifier_logits"})) {
    trace["pooled_output"] = pooler->forward(states.back());
    trace["classifier_logits"] = classifier->forward(trace["pooled_output"]);
  }
  if (lm_predictions) {
    if (want("mlm_logits_no_emd")) trace["mlm_logits_no_emd"] = lm_predictions->lm_head->forward(states.back());
    if (CanRunEmd() && emd) {
      absl::StatusOr<at::Tensor> decoded = EnhancedMaskDecoder(states[states.size() - 2], ctx, live, &trace);
      TORCH_CHECK(decoded.ok(), decoded.status().ToString());
      const at::Tensor final_states = *std::move(decoded);
      trace["emd_final"] = final_states;
      if (want("mlm_logits_emd")) trace["mlm_logits_emd"] = lm_predictions->lm_head->forward(final_states);
    }
  }
  return trace;
}

}  // namespace deberta::model
