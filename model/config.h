// DebertaConfig: the fields of a Hugging Face DeBERTa config.json that
// inference needs, with the defaults of docs/deberta-model.md section 1, and the parser that
// validates them. Torch-free; shared by the model library and the service.
#ifndef DEBERTA_MODEL_CONFIG_H_
#define DEBERTA_MODEL_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/problem_type.h"

namespace deberta::model {

enum class CheckpointLayout {
  kV1,  // model_type "deberta": fused in_proj, q_bias/v_bias, pos_proj.
  kV2,  // model_type "deberta-v2": split projections (v2, v3, mDeBERTa).
};

// Plain value type; copy freely.
struct DebertaConfig {
  CheckpointLayout layout = CheckpointLayout::kV2;
  std::string model_type;  // As written in config.json.
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t embedding_size = 0;  // Defaults to hidden_size.
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t attention_head_size = 0;  // Defaults to hidden_size / heads.
  int64_t intermediate_size = 0;
  std::string hidden_act = "gelu";
  double layer_norm_eps = 1e-7;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 0;
  bool position_biased_input = true;
  bool relative_attention = false;
  int64_t max_relative_positions = -1;  // Raw value; see MaxRelativePositions().
  int64_t position_buckets = -1;
  bool c2p = false;
  bool p2c = false;
  bool share_att_key = false;
  bool norm_rel_ebd_layer_norm = false;
  int64_t conv_kernel_size = 0;
  std::string conv_act = "tanh";
  int64_t conv_groups = 1;
  int64_t pad_token_id = 0;
  int64_t pooler_hidden_size = 0;  // Defaults to hidden_size.
  std::string pooler_hidden_act = "gelu";
  std::vector<std::string> labels;  // id2label in id order, or LABEL_i.
  // How classifier logits become scores (config.json's "problem_type").
  ProblemType problem_type = ProblemType::kSingleLabelClassification;
  bool has_legacy_field = false;    // config.json names "legacy" (HF-saved).
  // config.json's "architectures" (e.g. DebertaV2ForTokenClassification);
  // empty in the authors' hand-written configs.
  std::vector<std::string> architectures;

  // A = heads * head size: width of the attention projections.
  int64_t AllHeadSize() const { return num_attention_heads * attention_head_size; }
  // M of docs/deberta-model.md section 4: max_relative_positions, or P when it is < 1.
  int64_t MaxRelativePositions() const;
  // S of docs/deberta-model.md section 4: position_buckets when > 0, else M. The relative
  // table has 2S rows.
  int64_t RelativeSpan() const;
  // F of docs/deberta-model.md section 6.3: 1 + number of relative terms.
  int64_t ScaleFactor() const { return 1 + (c2p ? 1 : 0) + (p2c ? 1 : 0); }
};

// Parses and validates the text of a config.json. A missing required field,
// an unknown model_type or activation, or contradictory values give
// InvalidArgument naming the field.
absl::StatusOr<DebertaConfig> ParseDebertaConfig(absl::string_view json_text);

// Reads `path` and parses it. NotFound if the file cannot be read.
absl::StatusOr<DebertaConfig> LoadDebertaConfig(const std::string& path);

// Activation names the model implements: gelu (exact erf form), tanh, relu,
// swish, sigmoid, linear.
bool IsSupportedActivation(absl::string_view name);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_CONFIG_H_
