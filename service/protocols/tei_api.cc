// TEI's request bodies -> our task calls, and their answers back in TEI's
// shapes: what the TEI routes (tei_http.cc) and TEI's gRPC API
// (tei_grpc.cc) both answer with.
#include "service/protocols/tei_api.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "service/protocols/json_fields.h"

namespace deberta::service {
namespace {

namespace pb = serving::v1;
using Stub = pb::InferenceService::Stub;
using json = nlohmann::json;

// truncate and truncation_direction, as our Truncation.
absl::StatusOr<pb::Truncation> TruncationOf(JsonFields& fields) {
  absl::StatusOr<std::optional<bool>> truncate = fields.Bool("truncate");
  if (!truncate.ok()) return truncate.status();
  absl::StatusOr<std::optional<std::string>> direction = fields.String("truncation_direction");
  if (!direction.ok()) return direction.status();
  if (*direction && absl::AsciiStrToLower(**direction) != "right") {
    if (absl::AsciiStrToLower(**direction) == "left") {
      return absl::InvalidArgumentError("truncation_direction Left is not supported: this server cuts the end");
    }
    return absl::InvalidArgumentError(
        absl::StrCat("truncation_direction is '", **direction, "'; it must be Left or Right"));
  }
  if (!*truncate) return pb::TRUNCATION_UNSPECIFIED;
  return **truncate ? pb::TRUNCATION_LONGEST_FIRST : pb::TRUNCATION_NONE;
}

// TEI's PredictInput: a text, a pair of texts, or a batch of one- or
// two-text lists.
struct PredictInputs {
  std::vector<pb::Sequence> sequences;
  bool batch = false;
};

absl::StatusOr<pb::Sequence> SequenceOf(const json& texts, const std::string& where) {
  pb::Sequence sequence;
  if (texts.is_string()) {
    sequence.set_text(texts.get<std::string>());
    return sequence;
  }
  const bool strings = texts.is_array() && std::all_of(texts.begin(), texts.end(), [](const json& t) {
                         return t.is_string();
                       });
  if (!strings || texts.empty() || texts.size() > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " must be a text or a list of one or two texts, not ", texts.dump()));
  }
  sequence.set_text(texts[0].get<std::string>());
  if (texts.size() == 2) sequence.set_text_pair(texts[1].get<std::string>());
  return sequence;
}

absl::StatusOr<PredictInputs> PredictInputsOf(const json* inputs) {
  if (inputs == nullptr) return absl::InvalidArgumentError("inputs is required");
  PredictInputs out;
  // A list of lists is a batch; a list of two texts is a pair.
  out.batch = inputs->is_array() && !inputs->empty() && (*inputs)[0].is_array();
  if (!out.batch) {
    if (inputs->is_array() && inputs->size() != 2) {
      return absl::InvalidArgumentError(
          "inputs must be a text, a pair [text, text_pair], or a batch [[text], [text, text_pair], ...]");
    }
    absl::StatusOr<pb::Sequence> one = SequenceOf(*inputs, "inputs");
    if (!one.ok()) return one.status();
    out.sequences.push_back(*std::move(one));
    return out;
  }
  for (size_t i = 0; i < inputs->size(); ++i) {
    absl::StatusOr<pb::Sequence> one = SequenceOf((*inputs)[i], absl::StrCat("inputs[", i, "]"));
    if (!one.ok()) return one.status();
    out.sequences.push_back(*std::move(one));
  }
  return out;
}

// TEI's rule: softmax over several labels, sigmoid of one; raw: the logits.
std::vector<float> TeiScores(const pb::Classification& result, bool raw) {
  std::vector<float> scores(result.logits().begin(), result.logits().end());
  if (raw || scores.empty()) return scores;
  if (scores.size() == 1) {
    scores[0] = static_cast<float>(1.0 / (1.0 + std::exp(-double{scores[0]})));
    return scores;
  }
  const float max = *std::max_element(scores.begin(), scores.end());
  double sum = 0.0;
  for (float score : scores) sum += std::exp(double{score} - max);
  for (float& score : scores) score = static_cast<float>(std::exp(double{score} - max) / sum);
  return scores;
}

}  // namespace

absl::StatusOr<json> TeiPredict(TeiCalls& calls, const json& body) {
  JsonFields fields(body, "");
  absl::StatusOr<PredictInputs> inputs = PredictInputsOf(fields.Value("inputs"));
  if (!inputs.ok()) return inputs.status();
  absl::StatusOr<std::optional<bool>> raw = fields.Bool("raw_scores");
  if (!raw.ok()) return raw.status();
  absl::StatusOr<pb::Truncation> truncation = TruncationOf(fields);
  if (!truncation.ok()) return truncation.status();
  if (absl::Status s = fields.NoOtherKeys(); !s.ok()) return s;
  pb::ClassifyRequest request;
  request.set_top_k(0);
  request.set_truncation(*truncation);
  for (pb::Sequence& sequence : inputs->sequences) {
    calls.characters += static_cast<int64_t>(sequence.text().size() + sequence.text_pair().size());
    *request.add_sequences() = std::move(sequence);
  }
  pb::ClassifyResponse response;
  if (absl::Status s = calls.Run(&Stub::Classify, request, &response); !s.ok()) return s;
  json answer = json::array();
  for (const pb::Classification& result : response.results()) {
    const std::vector<float> scores = TeiScores(result, raw->value_or(false));
    std::map<int, std::string> names;
    for (const pb::LabelScore& label : result.labels()) names[label.label_id()] = label.label();
    std::vector<int> order(scores.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&scores](int a, int b) { return scores[a] > scores[b]; });
    json predictions = json::array();
    for (int id : order) predictions.push_back({{"score", scores[id]}, {"label", names[id]}});
    answer.push_back(std::move(predictions));
  }
  return inputs->batch ? answer : answer.front();
}

absl::StatusOr<json> TeiRerank(TeiCalls& calls, const json& body) {
  JsonFields fields(body, "");
  absl::StatusOr<std::optional<std::string>> query = fields.String("query");
  if (!query.ok()) return query.status();
  if (!*query) return absl::InvalidArgumentError("query is required");
  absl::StatusOr<std::optional<std::vector<std::string>>> texts = fields.Strings("texts");
  if (!texts.ok()) return texts.status();
  if (!*texts) return absl::InvalidArgumentError("texts is required: a list of texts");
  absl::StatusOr<std::optional<bool>> raw = fields.Bool("raw_scores");
  if (!raw.ok()) return raw.status();
  absl::StatusOr<std::optional<bool>> return_text = fields.Bool("return_text");
  if (!return_text.ok()) return return_text.status();
  absl::StatusOr<pb::Truncation> truncation = TruncationOf(fields);
  if (!truncation.ok()) return truncation.status();
  if (absl::Status s = fields.NoOtherKeys(); !s.ok()) return s;
  pb::RerankRequest request;
  request.set_query(**query);
  calls.characters += static_cast<int64_t>(query->value().size() * (*texts)->size());
  for (const std::string& text : **texts) {
    request.add_documents(text);
    calls.characters += static_cast<int64_t>(text.size());
  }
  request.set_raw_scores(raw->value_or(false));
  request.set_return_documents(return_text->value_or(false));
  request.set_truncation(*truncation);
  pb::RerankResponse response;
  if (absl::Status s = calls.Run(&Stub::Rerank, request, &response); !s.ok()) return s;
  json answer = json::array();
  for (const pb::RerankResult& result : response.results()) {
    json rank = {{"index", result.index()}, {"score", result.score()}};
    if (return_text->value_or(false)) rank["text"] = result.document();
    answer.push_back(std::move(rank));
  }
  return answer;
}

// Code-point offsets (ours) -> byte offsets in the UTF-8 text (TEI's).
std::vector<int64_t> ByteOffsetsOfCodePoints(const std::string& text) {
  std::vector<int64_t> bytes;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) bytes.push_back(static_cast<int64_t>(i));
  }
  bytes.push_back(static_cast<int64_t>(text.size()));
  return bytes;
}

absl::StatusOr<json> TeiTokenize(TeiCalls& calls, const json& body) {
  JsonFields fields(body, "");
  const json* inputs = fields.Value("inputs");
  if (inputs == nullptr) return absl::InvalidArgumentError("inputs is required");
  absl::StatusOr<std::optional<bool>> add_special = fields.Bool("add_special_tokens");
  if (!add_special.ok()) return add_special.status();
  if (fields.Value("prompt_name") != nullptr) {
    return absl::InvalidArgumentError("prompt_name is not supported: this server has no sentence-transformers prompts");
  }
  if (absl::Status s = fields.NoOtherKeys(); !s.ok()) return s;
  std::vector<std::string> texts;
  if (inputs->is_string()) {
    texts.push_back(inputs->get<std::string>());
  } else {
    absl::StatusOr<std::optional<std::vector<std::string>>> list = fields.Strings("inputs");
    if (!list.ok()) return list.status();
    texts = **list;
  }
  json answer = json::array();
  for (const std::string& text : texts) {
    pb::TokenizeRequest request;
    request.set_text(text);
    request.set_truncation(pb::TRUNCATION_NONE);
    pb::TokenizeResponse response;
    if (absl::Status s = calls.Run(&Stub::Tokenize, request, &response); !s.ok()) return s;
    calls.characters += static_cast<int64_t>(text.size());
    const std::vector<int64_t> bytes = ByteOffsetsOfCodePoints(text);
    const int last = response.token_ids_size() - 1;
    json tokens = json::array();
    for (int i = 0; i <= last; ++i) {
      // Our tokenization is [CLS] content [SEP]: the first and last are the added tokens.
      const bool special = i == 0 || i == last;
      if (special && !add_special->value_or(true)) continue;
      json token = {{"id", response.token_ids(i)}, {"special", special}};
      if (special) {
        token["text"] = response.pieces(i);
        token["start"] = nullptr;
        token["stop"] = nullptr;
      } else {
        const auto& offset = response.offsets(i);
        const auto clamp = [&bytes](int32_t c) { return bytes[std::min<size_t>(std::max(c, 0), bytes.size() - 1)]; };
        const int64_t start = clamp(offset.begin()), stop = clamp(offset.end());
        token["text"] = text.substr(start, stop - start);
        token["start"] = start;
        token["stop"] = stop;
      }
      tokens.push_back(std::move(token));
    }
    answer.push_back(std::move(tokens));
  }
  return answer;
}

absl::StatusOr<json> TeiDecode(TeiCalls& calls, const json& body) {
  JsonFields fields(body, "");
  const json* ids = fields.Value("ids");
  if (ids == nullptr || !ids->is_array()) return absl::InvalidArgumentError("ids is required: a list of token ids");
  absl::StatusOr<std::optional<bool>> skip = fields.Bool("skip_special_tokens");
  if (!skip.ok()) return skip.status();
  if (!skip->value_or(true)) {
    return absl::InvalidArgumentError(
        "skip_special_tokens false is not supported: this server's tokenizers decode content tokens only");
  }
  if (absl::Status s = fields.NoOtherKeys(); !s.ok()) return s;
  const bool batch = !ids->empty() && (*ids)[0].is_array();
  const json lists = batch ? *ids : json::array({*ids});
  json answer = json::array();
  for (size_t i = 0; i < lists.size(); ++i) {
    pb::DetokenizeRequest request;
    for (const json& id : lists[i]) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0) {
        return absl::InvalidArgumentError(absl::StrCat("ids must hold token ids (integers >= 0), not ", id.dump()));
      }
      request.add_token_ids(id.get<int32_t>());
    }
    pb::DetokenizeResponse response;
    if (absl::Status s = calls.Run(&Stub::Detokenize, request, &response); !s.ok()) return s;
    answer.push_back(response.text());
  }
  return answer;
}

absl::StatusOr<json> TeiInfo(TeiCalls& calls) {
  pb::GetModelInfoRequest request;
  pb::ModelInfo info;
  if (absl::Status s = calls.Run(&Stub::GetModelInfo, request, &info); !s.ok()) return s;
  json id2label = json::object(), label2id = json::object();
  for (int i = 0; i < info.labels_size(); ++i) {
    id2label[std::to_string(i)] = info.labels(i);
    label2id[info.labels(i)] = i;
  }
  json model_type = json::object();
  if (info.has_classifier()) {
    model_type[info.is_reranker() ? "reranker" : "classifier"] = {{"id2label", id2label}, {"label2id", label2id}};
  }
  return json{{"model_id", info.model_name()},
              {"model_sha", nullptr},
              {"model_dtype", info.dtype()},
              {"model_type", std::move(model_type)},
              {"max_input_length", info.max_sequence_length()},
              {"version", info.server_version()},
              {"sha", nullptr},
              {"docker_label", nullptr}};
}

}  // namespace deberta::service
