// Parsing of Hugging Face DeBERTa config.json files (docs/deberta-model.md section 1).
#include "model/config.h"

#include <tuple>

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "model/status_macros.h"
#include "nlohmann/json.hpp"

namespace deberta::model {
namespace {

using json = nlohmann::json;

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("config.json: field '", field, "' ", problem));
}

// Reads an integer field; `fallback` when absent. `required` fields that are
// absent are an error.
absl::StatusOr<int64_t> GetInt(const json& j, const char* field,
                               bool required, int64_t fallback) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) {
    if (required) return FieldError(field, "is required but missing");
    return fallback;
  }
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_float()) {
    double v = it->get<double>();
    if (v == static_cast<double>(static_cast<int64_t>(v))) {
      return static_cast<int64_t>(v);
    }
  }
  return FieldError(field, absl::StrCat("must be an integer, got ", it->dump()));
}

absl::StatusOr<bool> GetBool(const json& j, const char* field, bool fallback) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) {
    return FieldError(field, absl::StrCat("must be true or false, got ", it->dump()));
  }
  return it->get<bool>();
}

absl::StatusOr<std::string> GetString(const json& j, const char* field,
                                      std::string fallback) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_string()) {
    return FieldError(field, absl::StrCat("must be a string, got ", it->dump()));
  }
  return it->get<std::string>();
}

absl::Status CheckPositive(const char* field, int64_t value) {
  if (value <= 0) return FieldError(field, absl::StrCat("must be > 0, got ", value));
  return absl::OkStatus();
}

// Sizes beyond any real DeBERTa (the largest vocabulary is mDeBERTa's 250k)
// are refused before anything is allocated from them.
absl::Status CheckAtMost(const char* field, int64_t value, int64_t limit) {
  if (value > limit) return FieldError(field, absl::StrCat("is ", value, "; at most ", limit, " is supported"));
  return absl::OkStatus();
}

absl::Status CheckActivation(const char* field, const std::string& name) {
  if (!IsSupportedActivation(name)) {
    return FieldError(field, absl::StrCat("names unsupported activation '", name,
                                          "' (supported: gelu, tanh, relu, swish, "
                                          "sigmoid, linear)"));
  }
  return absl::OkStatus();
}

// pos_att_type: "c2p|p2c" string or ["p2c", "c2p"] list.
absl::Status ParsePosAttType(const json& j, DebertaConfig& config) {
  auto it = j.find("pos_att_type");
  if (it == j.end() || it->is_null()) {
    if (config.relative_attention) {
      return FieldError("pos_att_type",
                        "is required when relative_attention is true (the "
                        "reference and Hugging Face disagree on its default)");
    }
    return absl::OkStatus();
  }
  std::vector<std::string> items;
  if (it->is_string()) {
    for (absl::string_view part :
         absl::StrSplit(it->get<std::string>(), '|', absl::SkipWhitespace())) {
      items.emplace_back(part);
    }
  } else if (it->is_array()) {
    for (const json& e : *it) {
      if (!e.is_string()) {
        return FieldError("pos_att_type", absl::StrCat("list must hold strings, got ", e.dump()));
      }
      items.push_back(e.get<std::string>());
    }
  } else {
    return FieldError("pos_att_type", absl::StrCat("must be a string or a list, got ", it->dump()));
  }
  for (std::string item : items) {
    item = absl::AsciiStrToLower(absl::StripAsciiWhitespace(item));
    if (item.empty() || item == "none") continue;
    if (item == "c2p") {
      config.c2p = true;
    } else if (item == "p2c") {
      config.p2c = true;
    } else {
      return FieldError("pos_att_type",
                        absl::StrCat("has unsupported term '", item,
                                     "' (supported: c2p, p2c; p2p is broken in the reference)"));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseLabels(const json& j, DebertaConfig& config) {
  int64_t num_labels = -1;
  if (auto it = j.find("num_labels"); it != j.end() && it->is_number_integer()) {
    num_labels = it->get<int64_t>();
  }
  auto it = j.find("id2label");
  if (it != j.end() && it->is_object() && !it->empty()) {
    std::vector<std::string> labels(it->size());
    for (const auto& [key, value] : it->items()) {
      size_t consumed = 0;
      int64_t id = -1;
      try {
        id = std::stoll(key, &consumed);
      } catch (const std::exception&) {
        consumed = 0;
      }
      if (consumed != key.size() || id < 0 || id >= static_cast<int64_t>(labels.size())) {
        return FieldError("id2label", absl::StrCat("has key '", key,
                                                   "'; keys must be the ids 0..",
                                                   labels.size() - 1));
      }
      if (!value.is_string()) {
        return FieldError("id2label", absl::StrCat("value for id ", key, " must be a string"));
      }
      labels[id] = value.get<std::string>();
    }
    if (num_labels >= 0 && num_labels != static_cast<int64_t>(labels.size())) {
      return FieldError("num_labels", absl::StrCat("is ", num_labels, " but id2label has ",
                                                   labels.size(), " entries"));
    }
    config.labels = std::move(labels);
    return absl::OkStatus();
  }
  if (num_labels < 0) num_labels = 2;  // Hugging Face's default.
  for (int64_t i = 0; i < num_labels; ++i) config.labels.push_back(absl::StrCat("LABEL_", i));
  return absl::OkStatus();
}

// model_type, and the checkpoint layout it implies.
absl::Status ParseModelType(const json& j, DebertaConfig& c) {
  DEBERTA_ASSIGN_OR_RETURN(c.model_type, GetString(j, "model_type", ""));
  if (c.model_type == "deberta") {
    c.layout = CheckpointLayout::kV1;
  } else if (c.model_type == "deberta-v2") {
    c.layout = CheckpointLayout::kV2;
  } else if (c.model_type.empty()) {
    return FieldError("model_type", "is required but missing (expected 'deberta' or 'deberta-v2')");
  } else {
    return FieldError("model_type", absl::StrCat("is '", c.model_type, "'; expected 'deberta' or 'deberta-v2'"));
  }
  return absl::OkStatus();
}

// The sizes that allocate memory, each positive and within what any real
// DeBERTa has.
absl::Status ParseSizes(const json& j, DebertaConfig& c) {
  DEBERTA_ASSIGN_OR_RETURN(c.vocab_size, GetInt(j, "vocab_size", true, 0));
  DEBERTA_ASSIGN_OR_RETURN(c.hidden_size, GetInt(j, "hidden_size", true, 0));
  DEBERTA_ASSIGN_OR_RETURN(c.num_hidden_layers, GetInt(j, "num_hidden_layers", true, 0));
  DEBERTA_ASSIGN_OR_RETURN(c.num_attention_heads, GetInt(j, "num_attention_heads", true, 0));
  DEBERTA_ASSIGN_OR_RETURN(c.intermediate_size, GetInt(j, "intermediate_size", true, 0));
  for (auto [name, value] : {std::pair<const char*, int64_t>{"vocab_size", c.vocab_size},
                             {"hidden_size", c.hidden_size},
                             {"num_hidden_layers", c.num_hidden_layers},
                             {"num_attention_heads", c.num_attention_heads},
                             {"intermediate_size", c.intermediate_size}}) {
    DEBERTA_RETURN_IF_ERROR(CheckPositive(name, value));
  }
  DEBERTA_ASSIGN_OR_RETURN(c.embedding_size, GetInt(j, "embedding_size", false, c.hidden_size));
  DEBERTA_RETURN_IF_ERROR(CheckPositive("embedding_size", c.embedding_size));

  const int64_t default_head = c.hidden_size / c.num_attention_heads;
  DEBERTA_ASSIGN_OR_RETURN(c.attention_head_size, GetInt(j, "attention_head_size", false, default_head));
  if (!j.contains("attention_head_size") && c.hidden_size % c.num_attention_heads != 0) {
    return FieldError("hidden_size", absl::StrCat(c.hidden_size, " is not a multiple of num_attention_heads ",
                                                  c.num_attention_heads, " and attention_head_size is absent"));
  }
  DEBERTA_RETURN_IF_ERROR(CheckPositive("attention_head_size", c.attention_head_size));
  DEBERTA_ASSIGN_OR_RETURN(c.max_position_embeddings, GetInt(j, "max_position_embeddings", false, 512));
  DEBERTA_RETURN_IF_ERROR(CheckPositive("max_position_embeddings", c.max_position_embeddings));
  DEBERTA_ASSIGN_OR_RETURN(c.type_vocab_size, GetInt(j, "type_vocab_size", false, 0));
  if (c.type_vocab_size < 0) return FieldError("type_vocab_size", "must be >= 0");
  for (auto [name, value, limit] : {std::tuple<const char*, int64_t, int64_t>{"vocab_size", c.vocab_size, 1 << 24},
                                    {"hidden_size", c.hidden_size, 1 << 16},
                                    {"embedding_size", c.embedding_size, 1 << 16},
                                    {"num_hidden_layers", c.num_hidden_layers, 1024},
                                    {"num_attention_heads", c.num_attention_heads, 1024},
                                    {"attention_head_size", c.attention_head_size, 1 << 12},
                                    {"intermediate_size", c.intermediate_size, 1 << 18},
                                    {"max_position_embeddings", c.max_position_embeddings, 1 << 16},
                                    {"type_vocab_size", c.type_vocab_size, 1 << 16}}) {
    DEBERTA_RETURN_IF_ERROR(CheckAtMost(name, value, limit));
  }
  return absl::OkStatus();
}

// The layers' activation and LayerNorm epsilon; the embeddings' absolute
// positions (added to the input or not) and padding id.
absl::Status ParseLayerSettings(const json& j, DebertaConfig& c) {
  DEBERTA_ASSIGN_OR_RETURN(c.hidden_act, GetString(j, "hidden_act", "gelu"));
  DEBERTA_RETURN_IF_ERROR(CheckActivation("hidden_act", c.hidden_act));
  if (auto it = j.find("layer_norm_eps"); it != j.end() && !it->is_null()) {
    if (!it->is_number()) return FieldError("layer_norm_eps", "must be a number");
    c.layer_norm_eps = it->get<double>();
    if (!(c.layer_norm_eps > 0)) return FieldError("layer_norm_eps", "must be > 0");
  }
  DEBERTA_ASSIGN_OR_RETURN(c.position_biased_input, GetBool(j, "position_biased_input", true));
  DEBERTA_ASSIGN_OR_RETURN(c.pad_token_id, GetInt(j, "pad_token_id", false, 0));
  return absl::OkStatus();
}

// Disentangled attention: the relative span or buckets, the position
// terms, key sharing and the relative table's LayerNorm, checked against
// each other and the layout (docs/deberta-model.md sections 4-6).
absl::Status ParseRelativeAttention(const json& j, DebertaConfig& c) {
  bool talking_head = false;
  if (auto it = j.find("talking_head"); it != j.end() && it->is_boolean()) talking_head = it->get<bool>();
  if (talking_head) {
    return FieldError("talking_head", "is true; no released checkpoint uses it and it is not supported");
  }
  DEBERTA_ASSIGN_OR_RETURN(c.relative_attention, GetBool(j, "relative_attention", false));
  DEBERTA_ASSIGN_OR_RETURN(c.max_relative_positions, GetInt(j, "max_relative_positions", false, -1));
  DEBERTA_ASSIGN_OR_RETURN(c.position_buckets, GetInt(j, "position_buckets", false, -1));
  DEBERTA_RETURN_IF_ERROR(CheckAtMost("max_relative_positions", c.max_relative_positions, 1 << 16));
  DEBERTA_RETURN_IF_ERROR(CheckAtMost("position_buckets", c.position_buckets, 1 << 16));
  DEBERTA_RETURN_IF_ERROR(ParsePosAttType(j, c));
  DEBERTA_ASSIGN_OR_RETURN(c.share_att_key, GetBool(j, "share_att_key", false));

  // norm_rel_ebd: "layer_norm", "none", or a '|' list containing layer_norm.
  std::string norm;
  DEBERTA_ASSIGN_OR_RETURN(norm, GetString(j, "norm_rel_ebd", "none"));
  for (absl::string_view part : absl::StrSplit(norm, '|', absl::SkipWhitespace())) {
    std::string item = absl::AsciiStrToLower(absl::StripAsciiWhitespace(part));
    if (item == "layer_norm") {
      c.norm_rel_ebd_layer_norm = true;
    } else if (item != "none") {
      return FieldError("norm_rel_ebd", absl::StrCat("has unsupported value '", item, "'"));
    }
  }

  if (!c.relative_attention || c.position_buckets <= 0) return absl::OkStatus();
  if (c.layout == CheckpointLayout::kV1) {
    return FieldError("position_buckets", "is only supported for model_type deberta-v2");
  }
  if (c.MaxRelativePositions() < 2) {
    return FieldError("max_relative_positions", "must be >= 2 when position_buckets is set");
  }
  if (c.position_buckets / 2 >= c.MaxRelativePositions()) {
    return FieldError("position_buckets", absl::StrCat("is ", c.position_buckets,
                                                       "; half of it must be below the maximum relative distance ",
                                                       c.MaxRelativePositions()));
  }
  return absl::OkStatus();
}

// The v2 ConvLayer after the first layer (docs/deberta-model.md section 7.1).
absl::Status ParseConv(const json& j, DebertaConfig& c) {
  DEBERTA_ASSIGN_OR_RETURN(c.conv_kernel_size, GetInt(j, "conv_kernel_size", false, 0));
  DEBERTA_ASSIGN_OR_RETURN(c.conv_act, GetString(j, "conv_act", "tanh"));
  DEBERTA_ASSIGN_OR_RETURN(c.conv_groups, GetInt(j, "conv_groups", false, 1));
  if (c.conv_kernel_size <= 0) return absl::OkStatus();
  if (c.layout != CheckpointLayout::kV2) {
    return FieldError("conv_kernel_size", "is only supported for model_type deberta-v2");
  }
  if (c.conv_kernel_size % 2 == 0) {
    return FieldError("conv_kernel_size", absl::StrCat("must be odd, got ", c.conv_kernel_size));
  }
  DEBERTA_RETURN_IF_ERROR(CheckActivation("conv_act", c.conv_act));
  if (c.conv_groups <= 0 || c.hidden_size % c.conv_groups != 0) {
    return FieldError("conv_groups",
                      absl::StrCat("must divide hidden_size ", c.hidden_size, ", got ", c.conv_groups));
  }
  return absl::OkStatus();
}

// The classification heads: pooler, labels and problem type; `legacy`,
// which the EMD decision reads; `architectures`, which tells a token
// classifier.
absl::Status ParseHeads(const json& j, DebertaConfig& c) {
  DEBERTA_ASSIGN_OR_RETURN(c.pooler_hidden_size, GetInt(j, "pooler_hidden_size", false, c.hidden_size));
  // pooler_hidden_act, falling back to the authors' `pooling` object.
  std::string pooling_act = "gelu";
  if (auto it = j.find("pooling"); it != j.end() && it->is_object()) {
    DEBERTA_ASSIGN_OR_RETURN(pooling_act, GetString(*it, "hidden_act", "gelu"));
  }
  DEBERTA_ASSIGN_OR_RETURN(c.pooler_hidden_act, GetString(j, "pooler_hidden_act", pooling_act));
  DEBERTA_RETURN_IF_ERROR(CheckActivation("pooler_hidden_act", c.pooler_hidden_act));
  c.has_legacy_field = j.contains("legacy");
  if (auto it = j.find("architectures"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return FieldError("architectures", "must be a list of names");
    for (const json& name : *it) {
      if (!name.is_string()) return FieldError("architectures", absl::StrCat("must hold names, got ", name.dump()));
      c.architectures.push_back(name.get<std::string>());
    }
  }
  DEBERTA_RETURN_IF_ERROR(ParseLabels(j, c));
  if (c.pooler_hidden_size != c.hidden_size) {
    return FieldError("pooler_hidden_size",
                      absl::StrCat("is ", c.pooler_hidden_size, " but only pooler_hidden_size == hidden_size (",
                                   c.hidden_size, ") exists in DeBERTa"));
  }
  if (c.labels.empty()) return FieldError("num_labels", "must be > 0");
  DEBERTA_ASSIGN_OR_RETURN(std::string problem_type, GetString(j, "problem_type", ""));
  if (problem_type.empty()) return absl::OkStatus();
  const std::optional<ProblemType> parsed = ParseProblemType(problem_type);
  if (!parsed) {
    return FieldError("problem_type", absl::StrCat("is '", problem_type,
                                                   "'; expected single_label_classification, "
                                                   "multi_label_classification or regression"));
  }
  c.problem_type = *parsed;
  return absl::OkStatus();
}

absl::StatusOr<DebertaConfig> ParseJsonObject(const json& j) {
  DebertaConfig c;
  DEBERTA_RETURN_IF_ERROR(ParseModelType(j, c));
  DEBERTA_RETURN_IF_ERROR(ParseSizes(j, c));
  DEBERTA_RETURN_IF_ERROR(ParseLayerSettings(j, c));
  DEBERTA_RETURN_IF_ERROR(ParseRelativeAttention(j, c));
  DEBERTA_RETURN_IF_ERROR(ParseConv(j, c));
  DEBERTA_RETURN_IF_ERROR(ParseHeads(j, c));
  return c;
}

}  // namespace

int64_t DebertaConfig::MaxRelativePositions() const {
  return max_relative_positions < 1 ? max_position_embeddings : max_relative_positions;
}

int64_t DebertaConfig::RelativeSpan() const {
  return position_buckets > 0 ? position_buckets : MaxRelativePositions();
}

bool IsSupportedActivation(absl::string_view name) {
  return name == "gelu" || name == "tanh" || name == "relu" || name == "swish" ||
         name == "sigmoid" || name == "linear";
}

absl::StatusOr<DebertaConfig> ParseDebertaConfig(absl::string_view json_text) {
  json j = json::parse(json_text.begin(), json_text.end(), /*cb=*/nullptr,
                       /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("config.json: not valid JSON");
  if (!j.is_object()) return absl::InvalidArgumentError("config.json: top level must be an object");
  return ParseJsonObject(j);
}

absl::StatusOr<DebertaConfig> LoadDebertaConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto config = ParseDebertaConfig(buffer.str());
  if (!config.ok()) {
    return absl::Status(config.status().code(),
                        absl::StrCat(path, ": ", config.status().message()));
  }
  return config;
}

}  // namespace deberta::model
