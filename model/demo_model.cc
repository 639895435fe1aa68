// Deterministic weights for the demo model, drawn like the golden models'
// (linear N(0,1)/sqrt(fan_in), embeddings N(0, 0.5^2), LayerNorm gains
// 1 + N(0, 0.2^2), biases N(0, 0.1^2)) from a fixed-seed generator of our own,
// so the values do not depend on the LibTorch version.
#include "model/demo_model.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "model/safetensors.h"
#include "model/status_macros.h"

namespace deberta::model {
namespace {

constexpr int64_t kVocab = 1024, kHidden = 64, kHeads = 4, kLayers = 2, kIntermediate = 128,
                  kPositions = 512, kBuckets = 32, kLabels = 3;

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

std::string DemoConfigJson() {
  return absl::StrCat(R"({
  "architectures": ["DebertaV2ForMaskedLM", "DebertaV2ForSequenceClassification"],
  "model_type": "deberta-v2",
  "_comment": "deberta-serve built-in demo model: random weights, outputs carry no meaning",
  "vocab_size": )", kVocab, R"(,
  "hidden_size": )", kHidden, R"(,
  "num_hidden_layers": )", kLayers, R"(,
  "num_attention_heads": )", kHeads, R"(,
  "intermediate_size": )", kIntermediate, R"(,
  "hidden_act": "gelu",
  "layer_norm_eps": 1e-7,
  "max_position_embeddings": )", kPositions, R"(,
  "max_relative_positions": 128,
  "position_buckets": )", kBuckets, R"(,
  "relative_attention": true,
  "position_biased_input": false,
  "pos_att_type": "p2c|c2p",
  "share_att_key": true,
  "norm_rel_ebd": "layer_norm",
  "type_vocab_size": 0,
  "pad_token_id": 0,
  "id2label": {"0": "negative", "1": "neutral", "2": "positive"}
})");
}

std::string DemoCheckpointBytes() {
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
  tensors[e + "word_embeddings.weight"] = Draw(gen, {kVocab, kHidden}, 0.0, 0.5);
  tensors[e + "position_embeddings.weight"] = Draw(gen, {kPositions, kHidden}, 0.0, 0.5);
  layer_norm(e + "LayerNorm", kHidden);
  tensors["deberta.encoder.rel_embeddings.weight"] = Draw(gen, {2 * kBuckets, kHidden}, 0.0, 0.5);
  layer_norm("deberta.encoder.LayerNorm", kHidden);
  for (int64_t i = 0; i < kLayers; ++i) {
    const std::string p = absl::StrCat("deberta.encoder.layer.", i, ".");
    linear(p + "attention.self.query_proj", kHidden, kHidden);
    linear(p + "attention.self.key_proj", kHidden, kHidden);
    linear(p + "attention.self.value_proj", kHidden, kHidden);
    linear(p + "attention.output.dense", kHidden, kHidden);
    layer_norm(p + "attention.output.LayerNorm", kHidden);
    linear(p + "intermediate.dense", kIntermediate, kHidden);
    linear(p + "output.dense", kHidden, kIntermediate);
    layer_norm(p + "output.LayerNorm", kHidden);
  }
  linear("pooler.dense", kHidden, kHidden);
  linear("classifier", kLabels, kHidden);
  linear("lm_predictions.lm_head.dense", kHidden, kHidden);
  layer_norm("lm_predictions.lm_head.LayerNorm", kHidden);
  tensors["lm_predictions.lm_head.bias"] = Draw(gen, {kVocab}, 0.0, 0.1);
  // Cannot fail: every tensor above was built with matching byte counts.
  return *SerializeSafetensors(tensors, {{"format", "pt"}, {"deberta_serve_demo", "random weights"}});
}

absl::Status WriteDemoCheckpoint(const std::string& dir) {
  auto write_text = [](const std::string& path, const std::string& text) -> absl::Status {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
    return absl::OkStatus();
  };
  DEBERTA_RETURN_IF_ERROR(write_text(dir + "/config.json", DemoConfigJson()));
  DEBERTA_RETURN_IF_ERROR(write_text(dir + "/model.safetensors", DemoCheckpointBytes()));
  return write_text(dir + "/tokenizer_config.json",
                    absl::StrCat(R"({"pad_token": "[PAD]", "cls_token": "[CLS]", "sep_token": "[SEP]", )",
                                 R"("unk_token": "[UNK]", "mask_token": "[MASK]", "added_tokens_decoder": {)",
                                 R"("0": {"content": "[PAD]"}, "1": {"content": "[CLS]"}, )",
                                 R"("2": {"content": "[SEP]"}, "3": {"content": "[UNK]"}, )",
                                 R"("4": {"content": "[MASK]"}}})"));
}

}  // namespace deberta::model
