// The Open Inference Protocol's (v2) requests in its REST JSON shapes ->
// our task calls, and the answers back as output tensors.
#include "service/protocols/kserve_api.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "service/protocols/json_fields.h"

namespace deberta::service {
namespace {


namespace pb = serving::v1;
using Stub = pb::InferenceService::Stub;
using json = nlohmann::json;

enum class Head { kClassifier, kTokens, kFillMask };

// The model's description; NotFound when the path names another version.
absl::StatusOr<pb::ModelInfo> Describe(ModelCalls& calls, const std::string& version) {
  pb::GetModelInfoRequest request;
  pb::ModelInfo info;
  if (absl::Status s = calls.Run(&Stub::GetModelInfo, request, &info); !s.ok()) return s;
  if (!version.empty() && version != std::to_string(info.version())) {
    return absl::NotFoundError(absl::StrCat("model '", calls.model(), "' has no version ", version,
                                            "; it serves version ", info.version()));
  }
  return info;
}

absl::StatusOr<Head> HeadOf(const pb::ModelInfo& info) {
  if (info.has_token_classifier()) return Head::kTokens;
  if (info.has_classifier()) return Head::kClassifier;
  if (info.has_fill_mask()) return Head::kFillMask;
  return absl::FailedPreconditionError("the model has no head this API serves");
}

json TensorMetadata(const char* name, const char* datatype, std::vector<int64_t> shape) {
  return {{"name", name}, {"datatype", datatype}, {"shape", std::move(shape)}};
}

json ModelMetadata(const std::string& name, const pb::ModelInfo& info, Head head) {
  const int64_t labels = info.labels_size();
  json outputs = json::array();
  switch (head) {
    case Head::kClassifier:
      outputs = {TensorMetadata("logits", "FP32", {-1, labels}), TensorMetadata("probabilities", "FP32", {-1, labels}),
                 TensorMetadata("label", "BYTES", {-1})};
      break;
    case Head::kTokens: outputs = {TensorMetadata("entities", "BYTES", {-1})}; break;
    case Head::kFillMask: outputs = {TensorMetadata("fill_mask", "BYTES", {-1})}; break;
  }
  return {{"name", name},
          {"versions", {std::to_string(info.version())}},
          {"platform", "deberta-serve"},
          {"inputs",
           {TensorMetadata("text", "BYTES", {-1}), TensorMetadata("text_pair", "BYTES", {-1}),
            TensorMetadata("input_ids", "INT64", {-1, -1}), TensorMetadata("attention_mask", "INT64", {-1, -1}),
            TensorMetadata("token_type_ids", "INT64", {-1, -1})}},
          {"outputs", std::move(outputs)}};
}

// One input tensor: its shape and its data flattened (row-major).
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<json> data;
};

void Flatten(const json& data, std::vector<json>* out) {
  if (!data.is_array()) {
    out->push_back(data);
    return;
  }
  for (const json& item : data) Flatten(item, out);
}

absl::StatusOr<Tensor> ReadTensor(const json& input, size_t index, std::string* name) {
  JsonFields fields(input, absl::StrCat("inputs[", index, "]"));
  absl::StatusOr<std::optional<std::string>> tensor_name = fields.String("name");
  if (!tensor_name.ok()) return tensor_name.status();
  if (!*tensor_name) return absl::InvalidArgumentError(absl::StrCat("inputs[", index, "].name is required"));
  *name = **tensor_name;
  if (*name != "text" && *name != "text_pair" && *name != "input_ids" && *name != "attention_mask" &&
      *name != "token_type_ids") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown input '", *name, "'; the model takes text (and text_pair) or input_ids (with attention_mask, "
        "token_type_ids)"));
  }
  absl::StatusOr<std::optional<std::string>> datatype = fields.String("datatype");
  if (!datatype.ok()) return datatype.status();
  const bool text = *name == "text" || *name == "text_pair";
  const char* wanted = text ? "BYTES" : "INT64";
  if (!*datatype || (**datatype != wanted && !(!text && (**datatype == "INT32")))) {
    return absl::InvalidArgumentError(absl::StrCat("input '", *name, "' must have datatype ", wanted));
  }
  Tensor tensor;
  const json* shape = fields.Value("shape");
  if (shape == nullptr || !shape->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat("input '", *name, "' needs a shape"));
  }
  int64_t elements = 1;
  for (const json& dimension : *shape) {
    if (!dimension.is_number_integer() || dimension.get<int64_t>() < 0) {
      return absl::InvalidArgumentError(absl::StrCat("input '", *name, "' has a bad shape ", shape->dump()));
    }
    tensor.shape.push_back(dimension.get<int64_t>());
    elements *= tensor.shape.back();
  }
  const json* data = fields.Value("data");
  if (data == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("input '", *name, "' has no data (binary data is not supported)"));
  }
  Flatten(*data, &tensor.data);
  if (static_cast<int64_t>(tensor.data.size()) != elements) {
    return absl::InvalidArgumentError(absl::StrCat("input '", *name, "' has ", tensor.data.size(),
                                                   " values; its shape ", shape->dump(), " holds ", elements));
  }
  (void)fields.Value("parameters");
  if (absl::Status s = fields.NoOtherKeys(); !s.ok()) return s;
  const size_t expected_rank = text ? 1 : 2;
  if (tensor.shape.size() != expected_rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", *name, "' must have ", expected_rank, " dimension", text ? "" : "s"));
  }
  for (const json& value : tensor.data) {
    if (text ? !value.is_string() : !value.is_number_integer()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", *name, "' holds ", value.dump(), "; it takes ",
                                                     text ? "strings" : "integers"));
    }
  }
  return tensor;
}

// The request's inputs as our sequences.
absl::StatusOr<std::vector<pb::Sequence>> SequencesOf(const json& inputs) {
  if (!inputs.is_array() || inputs.empty()) return absl::InvalidArgumentError("inputs must be a non-empty list");
  std::optional<Tensor> text, text_pair, input_ids, attention_mask, token_type_ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name;
    absl::StatusOr<Tensor> tensor = ReadTensor(inputs[i], i, &name);
    if (!tensor.ok()) return tensor.status();
    // ReadTensor accepts these five names only.
    std::optional<Tensor>* slot = name == "text"             ? &text
                                  : name == "text_pair"      ? &text_pair
                                  : name == "input_ids"      ? &input_ids
                                  : name == "attention_mask" ? &attention_mask
                                                             : &token_type_ids;
    *slot = *std::move(tensor);
  }
  std::vector<pb::Sequence> sequences;
  if (text && input_ids) return absl::InvalidArgumentError("send either text or input_ids, not both");
  if (text) {
    if (text_pair && text_pair->data.size() != text->data.size()) {
      return absl::InvalidArgumentError("text_pair must have one text per text");
    }
    for (size_t i = 0; i < text->data.size(); ++i) {
      pb::Sequence sequence;
      sequence.set_text(text->data[i].get<std::string>());
      if (text_pair) sequence.set_text_pair(text_pair->data[i].get<std::string>());
      sequences.push_back(std::move(sequence));
    }
    return sequences;
  }
  if (!input_ids) return absl::InvalidArgumentError("the request needs a text or an input_ids input");
  for (const std::optional<Tensor>* other : {&attention_mask, &token_type_ids}) {
    if (*other && (*other)->shape != input_ids->shape) {
      return absl::InvalidArgumentError("attention_mask and token_type_ids must have input_ids' shape");
    }
  }
  const int64_t rows = input_ids->shape[0], columns = input_ids->shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    pb::Sequence sequence;
    for (int64_t c = 0; c < columns; ++c) {
      const size_t at = static_cast<size_t>(r * columns + c);
      if (attention_mask && attention_mask->data[at].get<int64_t>() == 0) continue;  // Padding.
      sequence.add_token_ids(static_cast<int32_t>(input_ids->data[at].get<int64_t>()));
      if (token_type_ids) sequence.add_token_type_ids(static_cast<int32_t>(token_type_ids->data[at].get<int64_t>()));
    }
    sequences.push_back(std::move(sequence));
  }
  return sequences;
}

json Output(const char* name, const char* datatype, std::vector<int64_t> shape, json data) {
  return {{"name", name}, {"datatype", datatype}, {"shape", std::move(shape)}, {"data", std::move(data)}};
}

absl::StatusOr<json> Classify(ModelCalls& calls, std::vector<pb::Sequence> sequences, int64_t labels) {
  pb::ClassifyRequest request;
  request.set_top_k(0);
  for (pb::Sequence& sequence : sequences) *request.add_sequences() = std::move(sequence);
  pb::ClassifyResponse response;
  if (absl::Status s = calls.Run(&Stub::Classify, request, &response); !s.ok()) return s;
  json logits = json::array(), probabilities = json::array(), best = json::array();
  for (const pb::Classification& result : response.results()) {
    for (float logit : result.logits()) logits.push_back(logit);
    for (float probability : result.probabilities()) probabilities.push_back(probability);
    best.push_back(result.labels_size() > 0 ? result.labels(0).label() : "");
  }
  const int64_t batch = response.results_size();
  return json::array({Output("logits", "FP32", {batch, labels}, std::move(logits)),
                      Output("probabilities", "FP32", {batch, labels}, std::move(probabilities)),
                      Output("label", "BYTES", {batch}, std::move(best))});
}

absl::StatusOr<json> ClassifyTokens(ModelCalls& calls, std::vector<pb::Sequence> sequences, JsonFields& parameters) {
  absl::StatusOr<std::optional<std::string>> strategy = parameters.String("aggregation_strategy");
  if (!strategy.ok()) return strategy.status();
  pb::ClassifyTokensRequest request;
  const std::string name = absl::AsciiStrToUpper(absl::StrCat("AGGREGATION_", strategy->value_or("simple")));
  pb::Aggregation aggregation;
  if (!pb::Aggregation_Parse(name, &aggregation) || aggregation == pb::AGGREGATION_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat("parameters.aggregation_strategy is '", strategy->value_or(""),
                                                   "'; it must be none, simple, first, average or max"));
  }
  request.set_aggregation(aggregation);
  for (pb::Sequence& sequence : sequences) *request.add_sequences() = std::move(sequence);
  pb::ClassifyTokensResponse response;
  if (absl::Status s = calls.Run(&Stub::ClassifyTokens, request, &response); !s.ok()) return s;
  json data = json::array();
  for (const pb::TokenClassification& result : response.results()) {
    json entities = json::array();
    for (const pb::Entity& entity : result.entities()) {
      entities.push_back({{"label", entity.label()},
                          {"score", entity.score()},
                          {"start", entity.start()},
                          {"end", entity.end()},
                          {"word", entity.word()}});
    }
    data.push_back(entities.dump());
  }
  const int64_t batch = response.results_size();
  return json::array({Output("entities", "BYTES", {batch}, std::move(data))});
}

absl::StatusOr<json> FillMask(ModelCalls& calls, std::vector<pb::Sequence> sequences, JsonFields& parameters) {
  absl::StatusOr<std::optional<int64_t>> top_k = parameters.Int("top_k");
  if (!top_k.ok()) return top_k.status();
  pb::FillMaskRequest request;
  request.set_top_k(static_cast<int32_t>(top_k->value_or(5)));
  for (pb::Sequence& sequence : sequences) *request.add_sequences()->mutable_sequence() = std::move(sequence);
  pb::FillMaskResponse response;
  if (absl::Status s = calls.Run(&Stub::FillMask, request, &response); !s.ok()) return s;
  json data = json::array();
  for (const pb::FillMaskResult& result : response.results()) {
    json masks = json::array();
    for (const pb::MaskPrediction& prediction : result.predictions()) {
      json candidates = json::array();
      for (const pb::TokenCandidate& candidate : prediction.candidates()) {
        candidates.push_back({{"token_id", candidate.token_id()},
                              {"token", candidate.token()},
                              {"score", candidate.probability()},
                              {"sequence", candidate.sequence()}});
      }
      masks.push_back(std::move(candidates));
    }
    data.push_back(masks.dump());
  }
  const int64_t batch = response.results_size();
  return json::array({Output("fill_mask", "BYTES", {batch}, std::move(data))});
}

}  // namespace

absl::StatusOr<json> KserveModelMetadata(ModelCalls& calls, const std::string& version) {
  absl::StatusOr<pb::ModelInfo> info = Describe(calls, version);
  if (!info.ok()) return info.status();
  absl::StatusOr<Head> head = HeadOf(*info);
  if (!head.ok()) return head.status();
  return ModelMetadata(calls.model().empty() ? info->model_name() : calls.model(), *info, *head);
}

absl::StatusOr<json> KserveInfer(ModelCalls& calls, const std::string& version, const json& body) {
  JsonFields fields(body, "");
  absl::StatusOr<std::optional<std::string>> id = fields.String("id");
  if (!id.ok()) return id.status();
  const json* parameters = fields.Value("parameters");
  if (parameters != nullptr && !parameters->is_object()) return absl::InvalidArgumentError("parameters must be an object");
  const json* inputs = fields.Value("inputs");
  if (inputs == nullptr) return absl::InvalidArgumentError("inputs is required");
  const json* wanted = fields.Value("outputs");
  if (absl::Status s = fields.NoOtherKeys(); !s.ok()) return s;
  absl::StatusOr<std::vector<pb::Sequence>> sequences = SequencesOf(*inputs);
  if (!sequences.ok()) return sequences.status();
  absl::StatusOr<pb::ModelInfo> info = Describe(calls, version);
  if (!info.ok()) return info.status();
  absl::StatusOr<Head> head = HeadOf(*info);
  if (!head.ok()) return head.status();
  static const json kNone = json::object();
  JsonFields parameter_fields(parameters != nullptr ? *parameters : kNone, "parameters");
  absl::StatusOr<json> outputs = *head == Head::kClassifier ? Classify(calls, *std::move(sequences), info->labels_size())
                                 : *head == Head::kTokens   ? ClassifyTokens(calls, *std::move(sequences), parameter_fields)
                                                            : FillMask(calls, *std::move(sequences), parameter_fields);
  if (!outputs.ok()) return outputs.status();
  if (absl::Status s = parameter_fields.NoOtherKeys(); !s.ok()) return s;
  if (wanted != nullptr) {
    if (!wanted->is_array()) return absl::InvalidArgumentError("outputs must be a list of {name}");
    json chosen = json::array();
    for (const json& output : *wanted) {
      const std::string name = output.is_object() ? output.value("name", "") : "";
      bool found = false;
      for (const json& made : *outputs) {
        if (made["name"] == name) {
          chosen.push_back(made);
          found = true;
        }
      }
      if (!found) return absl::InvalidArgumentError(absl::StrCat("the model has no output '", name, "'"));
    }
    *outputs = std::move(chosen);
  }
  json answer = {{"model_name", calls.model().empty() ? info->model_name() : calls.model()},
                 {"model_version", std::to_string(info->version())},
                 {"outputs", *std::move(outputs)}};
  if (*id) answer["id"] = **id;
  return answer;
}

absl::StatusOr<bool> KserveModelReady(ModelCalls& calls, grpc::health::v1::Health::Stub& health,
                                      const std::string& version) {
  if (!version.empty()) {
    absl::StatusOr<pb::ModelInfo> info = Describe(calls, version);
    if (!info.ok()) return info.status();
  }
  return IsServing(health, calls.model());
}

}  // namespace deberta::service
