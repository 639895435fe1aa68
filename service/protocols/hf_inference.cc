// Hugging Face Inference API bodies -> our task calls, and their answers
// back in the shapes the Hugging Face clients parse.
#include "service/protocols/hf_inference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "service/protocols/in_process_call.h"
#include "service/protocols/json_fields.h"
#include "service/protocols/openapi_operation.h"

namespace deberta::service {
namespace {

namespace pb = serving::v1;
using Stub = pb::InferenceService::Stub;
using json = nlohmann::json;

enum class Task { kTextClassification, kTokenClassification, kFillMask, kZeroShot };

constexpr std::pair<std::string_view, Task> kTaskNames[] = {
    {"text-classification", Task::kTextClassification},
    {"token-classification", Task::kTokenClassification},
    {"fill-mask", Task::kFillMask},
    {"zero-shot-classification", Task::kZeroShot},
};

absl::StatusOr<Task> TaskNamed(std::string_view name) {
  for (const auto& [task_name, task] : kTaskNames) {
    if (name == task_name) return task;
  }
  return absl::NotFoundError(absl::StrCat("unknown task '", std::string(name),
                                          "'; this server runs text-classification, token-classification, "
                                          "fill-mask and zero-shot-classification"));
}

// `inputs` as a list: the items of a list (a batch), else the one value.
struct Inputs {
  std::vector<const json*> items;
  bool batch = false;
};

Inputs ListOf(const json& inputs) {
  Inputs out;
  out.batch = inputs.is_array();
  if (out.batch) {
    for (const json& item : inputs) out.items.push_back(&item);
  } else {
    out.items.push_back(&inputs);
  }
  return out;
}

absl::StatusOr<std::string> TextOf(const json& input, size_t index) {
  if (!input.is_string()) {
    return absl::InvalidArgumentError(absl::StrCat("inputs[", index, "] must be a string, not ", input.dump()));
  }
  return input.get<std::string>();
}

// The model's task when the URL names none.
absl::StatusOr<Task> ModelTask(ModelCalls& calls, const json* parameters) {
  if (parameters != nullptr && parameters->contains("candidate_labels")) return Task::kZeroShot;
  pb::GetModelInfoRequest request;
  pb::ModelInfo info;
  if (absl::Status s = calls.Run(&Stub::GetModelInfo, request, &info); !s.ok()) return s;
  if (info.has_token_classifier()) return Task::kTokenClassification;
  if (info.has_classifier()) return Task::kTextClassification;
  if (info.has_fill_mask()) return Task::kFillMask;
  return absl::FailedPreconditionError("the model has no head this API serves");
}

// --- text-classification ---

std::vector<float> Scores(const pb::Classification& result, const std::optional<std::string>& function) {
  if (!function) return std::vector<float>(result.probabilities().begin(), result.probabilities().end());
  std::vector<float> scores(result.logits().begin(), result.logits().end());
  if (*function == "none") return scores;
  if (*function == "sigmoid") {
    for (float& score : scores) score = static_cast<float>(1.0 / (1.0 + std::exp(-double{score})));
    return scores;
  }
  const float max = scores.empty() ? 0.0f : *std::max_element(scores.begin(), scores.end());
  double sum = 0.0;
  for (float score : scores) sum += std::exp(double{score} - max);
  for (float& score : scores) score = static_cast<float>(std::exp(double{score} - max) / sum);
  return scores;
}

absl::StatusOr<json> TextClassification(ModelCalls& calls, const json& inputs, JsonFields& parameters) {
  absl::StatusOr<std::optional<int64_t>> top_k = parameters.Int("top_k");
  if (!top_k.ok()) return top_k.status();
  if (*top_k && **top_k < 1) return absl::InvalidArgumentError(absl::StrCat("top_k is ", **top_k, "; it must be >= 1"));
  absl::StatusOr<std::optional<std::string>> function = parameters.String("function_to_apply");
  if (!function.ok()) return function.status();
  if (*function && **function != "sigmoid" && **function != "softmax" && **function != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("function_to_apply is '", **function, "'; it must be sigmoid, softmax or none"));
  }
  absl::StatusOr<std::optional<bool>> truncation = parameters.Bool("truncation");
  if (!truncation.ok()) return truncation.status();
  if (absl::Status s = parameters.NoOtherKeys(); !s.ok()) return s;

  pb::ClassifyRequest request;
  request.set_top_k(0);
  if (*truncation) request.set_truncation(**truncation ? pb::TRUNCATION_LONGEST_FIRST : pb::TRUNCATION_NONE);
  const Inputs list = ListOf(inputs);
  for (size_t i = 0; i < list.items.size(); ++i) {
    const json& item = *list.items[i];
    pb::Sequence* sequence = request.add_sequences();
    if (item.is_object() && item.contains("text")) {
      JsonFields pair(item, absl::StrCat("inputs[", i, "]"));
      absl::StatusOr<std::optional<std::string>> text = pair.String("text");
      if (!text.ok()) return text.status();
      absl::StatusOr<std::optional<std::string>> text_pair = pair.String("text_pair");
      if (!text_pair.ok()) return text_pair.status();
      if (absl::Status s = pair.NoOtherKeys(); !s.ok()) return s;
      sequence->set_text(text->value_or(""));
      if (*text_pair) sequence->set_text_pair(**text_pair);
      continue;
    }
    absl::StatusOr<std::string> text = TextOf(item, i);
    if (!text.ok()) return text.status();
    sequence->set_text(*text);
  }
  pb::ClassifyResponse response;
  if (absl::Status s = calls.Run(&Stub::Classify, request, &response); !s.ok()) return s;
  json answer = json::array();
  for (const pb::Classification& result : response.results()) {
    const std::vector<float> scores = Scores(result, *function);
    std::vector<std::pair<float, int>> order;
    for (const pb::LabelScore& label : result.labels()) {
      if (label.label_id() >= 0 && label.label_id() < static_cast<int>(scores.size())) {
        order.emplace_back(scores[label.label_id()], label.label_id());
      }
    }
    std::map<int, std::string> names;
    for (const pb::LabelScore& label : result.labels()) names[label.label_id()] = label.label();
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const size_t keep = *top_k ? std::min<size_t>(**top_k, order.size()) : order.size();
    json labels = json::array();
    for (size_t k = 0; k < keep; ++k) labels.push_back({{"label", names[order[k].second]}, {"score", order[k].first}});
    answer.push_back(std::move(labels));
  }
  return answer;
}

// --- token-classification ---

absl::StatusOr<pb::Aggregation> AggregationNamed(const std::string& name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "none") return pb::AGGREGATION_NONE;
  if (lower == "simple") return pb::AGGREGATION_SIMPLE;
  if (lower == "first") return pb::AGGREGATION_FIRST;
  if (lower == "average") return pb::AGGREGATION_AVERAGE;
  if (lower == "max") return pb::AGGREGATION_MAX;
  return absl::InvalidArgumentError(
      absl::StrCat("aggregation_strategy is '", name, "'; it must be none, simple, first, average or max"));
}

absl::StatusOr<json> TokenClassification(ModelCalls& calls, const json& inputs, JsonFields& parameters) {
  absl::StatusOr<std::optional<std::string>> strategy = parameters.String("aggregation_strategy");
  if (!strategy.ok()) return strategy.status();
  absl::StatusOr<pb::Aggregation> aggregation = AggregationNamed(strategy->value_or("simple"));
  if (!aggregation.ok()) return aggregation.status();
  absl::StatusOr<std::optional<std::vector<std::string>>> ignore = parameters.Strings("ignore_labels");
  if (!ignore.ok()) return ignore.status();
  absl::StatusOr<std::optional<int64_t>> stride = parameters.Int("stride");
  if (!stride.ok()) return stride.status();
  if (absl::Status s = parameters.NoOtherKeys(); !s.ok()) return s;

  pb::ClassifyTokensRequest request;
  request.set_aggregation(*aggregation);
  if (*ignore) {
    // An empty list keeps every label, as in transformers.
    if ((*ignore)->empty()) request.set_keep_all_labels(true);
    for (const std::string& label : **ignore) request.add_ignore_labels(label);
  }
  if (*stride) {
    if (**stride < 0) return absl::InvalidArgumentError(absl::StrCat("stride is ", **stride, "; it must be >= 0"));
    request.mutable_long_input()->set_mode(pb::LongInput::MODE_WINDOWS);
    request.mutable_long_input()->set_stride(static_cast<int32_t>(**stride));
  }
  const Inputs list = ListOf(inputs);
  for (size_t i = 0; i < list.items.size(); ++i) {
    absl::StatusOr<std::string> text = TextOf(*list.items[i], i);
    if (!text.ok()) return text.status();
    request.add_sequences()->set_text(*text);
  }
  pb::ClassifyTokensResponse response;
  if (absl::Status s = calls.Run(&Stub::ClassifyTokens, request, &response); !s.ok()) return s;
  const bool grouped = *aggregation != pb::AGGREGATION_NONE;
  json answer = json::array();
  for (const pb::TokenClassification& result : response.results()) {
    json entities = json::array();
    for (const pb::Entity& entity : result.entities()) {
      json item = {{grouped ? "entity_group" : "entity", entity.label()},
                   {"score", entity.score()},
                   {"word", entity.word()},
                   {"start", entity.start()},
                   {"end", entity.end()}};
      if (!grouped) item["index"] = entity.index();
      entities.push_back(std::move(item));
    }
    answer.push_back(std::move(entities));
  }
  return list.batch ? answer : answer.front();
}

// --- fill-mask ---

absl::StatusOr<json> FillMask(ModelCalls& calls, const json& inputs, JsonFields& parameters) {
  absl::StatusOr<std::optional<int64_t>> top_k = parameters.Int("top_k");
  if (!top_k.ok()) return top_k.status();
  if (*top_k && **top_k < 1) return absl::InvalidArgumentError(absl::StrCat("top_k is ", **top_k, "; it must be >= 1"));
  if (parameters.Value("targets") != nullptr) {
    return absl::InvalidArgumentError("targets is not supported: this server returns the top_k candidates");
  }
  if (absl::Status s = parameters.NoOtherKeys(); !s.ok()) return s;

  pb::FillMaskRequest request;
  request.set_top_k(static_cast<int32_t>(top_k->value_or(5)));
  const Inputs list = ListOf(inputs);
  for (size_t i = 0; i < list.items.size(); ++i) {
    absl::StatusOr<std::string> text = TextOf(*list.items[i], i);
    if (!text.ok()) return text.status();
    request.add_sequences()->mutable_sequence()->set_text(*text);
  }
  pb::FillMaskResponse response;
  if (absl::Status s = calls.Run(&Stub::FillMask, request, &response); !s.ok()) return s;
  // token_str is the token decoded alone, as the tokenizer decodes it. A
  // model's vocabulary may be longer than its tokenizer's (deberta-v3's
  // 128100 rows for 128000 pieces): such a row has no text but its piece.
  std::map<int32_t, std::string> decoded;
  auto token_str = [&](const pb::TokenCandidate& candidate) -> absl::StatusOr<std::string> {
    if (auto it = decoded.find(candidate.token_id()); it != decoded.end()) return it->second;
    pb::DetokenizeRequest detokenize;
    detokenize.add_token_ids(candidate.token_id());
    pb::DetokenizeResponse text;
    if (absl::Status s = calls.Run(&Stub::Detokenize, detokenize, &text); absl::IsInvalidArgument(s)) {
      text.set_text(candidate.token());
    } else if (!s.ok()) {
      return s;
    }
    return decoded[candidate.token_id()] = text.text();
  };
  json answer = json::array();
  for (const pb::FillMaskResult& result : response.results()) {
    json masks = json::array();
    for (const pb::MaskPrediction& prediction : result.predictions()) {
      json candidates = json::array();
      for (const pb::TokenCandidate& candidate : prediction.candidates()) {
        absl::StatusOr<std::string> text = token_str(candidate);
        if (!text.ok()) return text.status();
        candidates.push_back({{"score", candidate.probability()},
                              {"token", candidate.token_id()},
                              {"token_str", *text},
                              {"sequence", candidate.sequence()}});
      }
      masks.push_back(std::move(candidates));
    }
    // One mask: its candidates; several: a list per mask, as transformers.
    answer.push_back(masks.size() == 1 ? masks.front() : masks);
  }
  return list.batch ? answer : answer.front();
}

// --- zero-shot-classification ---

absl::StatusOr<json> ZeroShot(ModelCalls& calls, const json& inputs, JsonFields& parameters) {
  std::vector<std::string> labels;
  const json* candidate_labels = parameters.Value("candidate_labels");
  if (candidate_labels != nullptr && candidate_labels->is_string()) {
    // transformers also takes one comma-separated string.
    for (absl::string_view label : absl::StrSplit(candidate_labels->get<std::string>(), ',', absl::SkipWhitespace())) {
      labels.emplace_back(absl::StripAsciiWhitespace(label));
    }
  } else if (candidate_labels != nullptr && candidate_labels->is_array()) {
    absl::StatusOr<std::optional<std::vector<std::string>>> list = parameters.Strings("candidate_labels");
    if (!list.ok()) return list.status();
    labels = **list;
  } else {
    return absl::InvalidArgumentError("parameters.candidate_labels is required: a list of labels");
  }
  absl::StatusOr<std::optional<std::string>> hypothesis_template = parameters.String("hypothesis_template");
  if (!hypothesis_template.ok()) return hypothesis_template.status();
  absl::StatusOr<std::optional<bool>> multi_label = parameters.Bool("multi_label");
  if (!multi_label.ok()) return multi_label.status();
  if (absl::Status s = parameters.NoOtherKeys(); !s.ok()) return s;

  const Inputs list = ListOf(inputs);
  json answer = json::array();
  for (size_t i = 0; i < list.items.size(); ++i) {
    absl::StatusOr<std::string> text = TextOf(*list.items[i], i);
    if (!text.ok()) return text.status();
    pb::ZeroShotClassifyRequest request;
    request.set_text(*text);
    for (const std::string& label : labels) request.add_candidate_labels(label);
    if (*hypothesis_template) request.set_hypothesis_template(**hypothesis_template);
    request.set_multi_label(multi_label->value_or(false));
    pb::ZeroShotClassifyResponse response;
    if (absl::Status s = calls.Run(&Stub::ZeroShotClassify, request, &response); !s.ok()) return s;
    json names = json::array();
    json scores = json::array();
    for (const pb::ZeroShotLabel& label : response.labels()) {
      names.push_back(label.label());
      scores.push_back(label.score());
    }
    answer.push_back({{"sequence", *text}, {"labels", std::move(names)}, {"scores", std::move(scores)}});
  }
  return list.batch ? answer : answer.front();
}

// --- the route ---

absl::StatusOr<json> Answer(const httplib::Request& http_request, Stub& stub, const std::string& model,
                            std::optional<std::string_view> task_name) {
  absl::StatusOr<json> body = JsonFields::ParseObject(http_request.body);
  if (!body.ok()) return body.status();
  JsonFields fields(*body, "");
  const json* inputs = fields.Value("inputs");
  if (inputs == nullptr) return absl::InvalidArgumentError("inputs is required");
  const json* parameters = fields.Value("parameters");
  if (parameters != nullptr && !parameters->is_object()) {
    return absl::InvalidArgumentError("parameters must be an object");
  }
  // `options` (wait_for_model, use_cache) steer Hugging Face's own service.
  if (absl::Status s = fields.NoOtherKeys({"options"}); !s.ok()) return s;
  if (inputs->is_array() && inputs->empty()) return absl::InvalidArgumentError("inputs is an empty list");
  ModelCalls calls(http_request, Protocol::kHuggingFace, stub, model);
  absl::StatusOr<Task> task = task_name ? TaskNamed(*task_name) : ModelTask(calls, parameters);
  if (!task.ok()) return task.status();
  static const json kNoParameters = json::object();
  JsonFields parameter_fields(parameters != nullptr ? *parameters : kNoParameters, "parameters");
  switch (*task) {
    case Task::kTextClassification: return TextClassification(calls, *inputs, parameter_fields);
    case Task::kTokenClassification: return TokenClassification(calls, *inputs, parameter_fields);
    case Task::kFillMask: return FillMask(calls, *inputs, parameter_fields);
    case Task::kZeroShot: return ZeroShot(calls, *inputs, parameter_fields);
  }
  return absl::InternalError("unknown task");
}

}  // namespace

void AddHuggingFaceRoutes(httplib::Server& routes, std::shared_ptr<grpc::Channel> channel) {
  auto stub = std::make_shared<Stub>(channel);
  routes.Post(absl::StrCat("^", kHuggingFacePrefix, "([^/]+)$"),
              [stub](const httplib::Request& request, httplib::Response& response) {
                WriteAnswer(response, Answer(request, *stub, request.matches[1].str(), std::nullopt));
              });
  routes.Post(absl::StrCat("^", kHuggingFacePrefix, "([^/]+)/pipeline/([^/]+)$"),
              [stub](const httplib::Request& request, httplib::Response& response) {
                const std::string task = request.matches[2].str();
                WriteAnswer(response, Answer(request, *stub, request.matches[1].str(), task));
              });
}

json HuggingFaceOpenApi() {
  const json request = {
      {"type", "object"},
      {"required", {"inputs"}},
      {"properties",
       {{"inputs",
         {{"description",
           "A text, a list of texts, or for text-classification {text, text_pair} (or a list of them)."}}},
        {"parameters",
         {{"type", "object"},
          {"description",
           "The task's: top_k, function_to_apply, truncation (text-classification); aggregation_strategy, "
           "ignore_labels, stride (token-classification); top_k (fill-mask); candidate_labels, "
           "hypothesis_template, multi_label (zero-shot-classification)."}}},
        {"options", {{"type", "object"}, {"description", "Accepted and ignored (wait_for_model, use_cache)."}}}}}};
  const json answer = {{"description",
                        "The task's answer in transformers' shapes: [[{label, score}]] (text-classification), "
                        "[{entity_group, score, word, start, end}] (token-classification), [{score, token, "
                        "token_str, sequence}] (fill-mask), {sequence, labels, scores} "
                        "(zero-shot-classification); a list of them for a list of inputs."}};
  const json error = {{"type", "object"}, {"properties", {{"error", {{"type", "string"}}}}}};
  json model_task = AdapterPost("HuggingFaceModel",
                                "Hugging Face Inference API: the model's task (zero-shot with candidate_labels).",
                                request, answer, error);
  model_task["post"]["parameters"] = {PathParameter("model", "The model's name (ListModels).")};
  json named_task = AdapterPost("HuggingFacePipeline", "Hugging Face Inference API: a task named in the path.",
                                request, answer, error);
  named_task["post"]["parameters"] = {
      PathParameter("model", "The model's name (ListModels)."),
      PathParameter("task",
                    "text-classification, token-classification, fill-mask or zero-shot-classification.")};
  return {{absl::StrCat(kHuggingFacePrefix, "{model}"), std::move(model_task)},
          {absl::StrCat(kHuggingFacePrefix, "{model}/pipeline/{task}"), std::move(named_task)}};
}

}  // namespace deberta::service
