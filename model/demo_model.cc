// Deterministic weights for the demo model, drawn like the golden models'
// (linear N(0,1)/sqrt(fan_in), embeddings N(0, 0.5^2), LayerNorm gains
// 1 + N(0, 0.2^2), biases N(0, 0.1^2)) from a fixed-seed generator of our own,
// so the values do not depend on the LibTorch version.
#include "model/demo_model.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "model/safetensors.h"
#include "nlohmann/json.hpp"

namespace deberta::model {
namespace {

// CoNLL's labels in the authors' order, for the token classifiers.
constexpr const char* kNerLabels[] = {"O", "B-MISC", "I-MISC", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"};

// id2label and architectures of each task's config.json.
std::vector<std::string> TaskLabels(RandomModelTask task) {
  switch (task) {
    case RandomModelTask::kTokenClassification:
    case RandomModelTask::kAuthorsNer: return {std::begin(kNerLabels), std::end(kNerLabels)};
    case RandomModelTask::kRerank: return {"LABEL_0"};
    case RandomModelTask::kClassifyAndFillMask: break;
  }
  return {"negative", "neutral", "positive"};
}

std::string TaskArchitectures(RandomModelTask task) {
  switch (task) {
    case RandomModelTask::kTokenClassification: return R"("architectures": ["DebertaV2ForTokenClassification"],)";
    case RandomModelTask::kAuthorsNer: return "";  // The authors' configs name none.
    case RandomModelTask::kRerank: return R"("architectures": ["DebertaV2ForSequenceClassification"],)";
    case RandomModelTask::kClassifyAndFillMask: break;
  }
  return R"("architectures": ["DebertaV2ForMaskedLM", "DebertaV2ForSequenceClassification"],)";
}

// splitmix64: tiny, well-distributed, and identical everywhere.
class Generator {
 public:
  explicit Generator(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Uniform() { return ((Next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
  double Normal() {  // Box-Muller.
    return std::sqrt(-2.0 * std::log(Uniform())) * std::cos(6.283185307179586 * Uniform());
  }

 private:
  uint64_t state_;
};

OwnedTensor Draw(Generator& gen, std::vector<int64_t> shape, double mean, double stddev) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> values(n);
  for (float& v : values) v = static_cast<float>(mean + stddev * gen.Normal());
  OwnedTensor t;
  t.shape = std::move(shape);
  t.bytes.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return t;
}

}  // namespace

RandomModelShape DemoModelShape() {
  RandomModelShape shape;
  shape.name = "built-in demo model";
  return shape;
}

RandomModelShape DebertaV3BaseShape() {
  RandomModelShape shape;
  shape.name = "random deberta-v3-base";
  shape.vocab = 128100;
  shape.hidden = 768;
  shape.heads = 12;
  shape.layers = 12;
  shape.intermediate = 3072;
  shape.buckets = 256;
  shape.max_relative_positions = 512;
  return shape;
}

std::string RandomConfigJson(const RandomModelShape& m) {
  nlohmann::json id2label = nlohmann::json::object();
  const std::vector<std::string> labels = TaskLabels(m.task);
  for (size_t i = 0; i < labels.size(); ++i) id2label[std::to_string(i)] = labels[i];
  return absl::StrCat(R"({
  )", TaskArchitectures(m.task), R"(
  "model_type": "deberta-v2",
  "_comment": "deberta-serve )", m.name, R"(: random weights, outputs carry no meaning",
  "vocab_size": )", m.vocab, R"(,
  "hidden_size": )", m.hidden, R"(,
  "num_hidden_layers": )", m.layers, R"(,
  "num_attention_heads": )", m.heads, R"(,
  "intermediate_size": )", m.intermediate, R"(,
  "hidden_act": "gelu",
  "layer_norm_eps": 1e-7,
  "max_position_embeddings": )", m.positions, R"(,
  "max_relative_positions": )", m.max_relative_positions, R"(,
  "position_buckets": )", m.buckets, R"(,
  "relative_attention": true,
  "position_biased_input": false,
  "pos_att_type": "p2c|c2p",
  "share_att_key": true,
  "norm_rel_ebd": "layer_norm",
  "type_vocab_size": 0,
  "pad_token_id": 0,
  "id2label": )", id2label.dump(), R"(
})");
}

std::string RandomCheckpointBytes(const RandomModelShape& m) {
  std::map<std::string, OwnedTensor> tensors;
  Generator gen(20261129);
  auto linear = [&](const std::string& name, int64_t out, int64_t in) {
    tensors[name + ".weight"] = Draw(gen, {out, in}, 0.0, 1.0 / std::sqrt(static_cast<double>(in)));
    tensors[name + ".bias"] = Draw(gen, {out}, 0.0, 0.1);
  };
  auto layer_norm = [&](const std::string& name, int64_t size) {
    tensors[name + ".weight"] = Draw(gen, {size}, 1.0, 0.2);
    tensors[name + ".bias"] = Draw(gen, {size}, 0.0, 0.1);
  };
  const std::string e = "deberta.embeddings.";
  tensors[e + "word_embeddings.weight"] = Draw(gen, {m.vocab, m.hidden}, 0.0, 0.5);
  tensors[e + "position_embeddings.weight"] = Draw(gen, {m.positions, m.hidden}, 0.0, 0.5);
  layer_norm(e + "LayerNorm", m.hidden);
  tensors["deberta.encoder.rel_embeddings.weight"] = Draw(gen, {2 * m.buckets, m.hidden}, 0.0, 0.5);
  layer_norm("deberta.encoder.LayerNorm", m.hidden);
  for (int64_t i = 0; i < m.layers; ++i) {
    const std::string p = absl::StrCat("deberta.encoder.layer.", i, ".");
    linear(p + "attention.self.query_proj", m.hidden, m.hidden);
    linear(p + "attention.self.key_proj", m.hidden, m.hidden);
    linear(p + "attention.self.value_proj", m.hidden, m.hidden);
    linear(p + "attention.output.dense", m.hidden, m.hidden);
    layer_norm(p + "attention.output.LayerNorm", m.hidden);
    linear(p + "intermediate.dense", m.intermediate, m.hidden);
    linear(p + "output.dense", m.hidden, m.intermediate);
    layer_norm(p + "output.LayerNorm", m.hidden);
  }
  const auto labels = static_cast<int64_t>(TaskLabels(m.task).size());
  switch (m.task) {
    case RandomModelTask::kClassifyAndFillMask:
      linear("pooler.dense", m.hidden, m.hidden);
      linear("classifier", labels, m.hidden);
      linear("lm_predictions.lm_head.dense", m.hidden, m.hidden);
      layer_norm("lm_predictions.lm_head.LayerNorm", m.hidden);
      tensors["lm_predictions.lm_head.bias"] = Draw(gen, {m.vocab}, 0.0, 0.1);
      break;
    case RandomModelTask::kRerank:
      linear("pooler.dense", m.hidden, m.hidden);
      linear("classifier", labels, m.hidden);
      break;
    case RandomModelTask::kAuthorsNer:
      linear("proj", m.hidden, m.hidden);
      linear("classifier", labels, m.hidden);
      break;
    case RandomModelTask::kTokenClassification:
      linear("classifier", labels, m.hidden);
      break;
  }
  // Cannot fail: every tensor above was built with matching byte counts.
  return *SerializeSafetensors(tensors, {{"format", "pt"}, {"deberta_serve_random_model", m.name}});
}

std::string DemoConfigJson() { return RandomConfigJson(DemoModelShape()); }

std::string DemoCheckpointBytes() { return RandomCheckpointBytes(DemoModelShape()); }

}  // namespace deberta::model
