// Random-weight base-size networks for the model benchmarks.
#include "bench/random_network.h"

#include <ATen/ATen.h>

#include "model/torch/network_loader.h"

namespace deberta::model {
namespace {

const char* kBaseV1 = R"({"model_type": "deberta", "vocab_size": 50265, "hidden_size": 768,
  "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
  "max_position_embeddings": 512, "relative_attention": true, "position_biased_input": false,
  "pos_att_type": "c2p|p2c", "id2label": {"0": "a", "1": "b", "2": "c"}})";
const char* kBaseV3 = R"({"model_type": "deberta-v2", "vocab_size": 128100, "hidden_size": 768,
  "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
  "max_position_embeddings": 512, "relative_attention": true, "position_biased_input": false,
  "position_buckets": 256, "share_att_key": true, "norm_rel_ebd": "layer_norm",
  "pos_att_type": "p2c|c2p", "id2label": {"0": "a", "1": "b", "2": "c"}})";

}  // namespace

DebertaConfig BaseConfig(const std::string& which) { return *ParseDebertaConfig(which == "v1" ? kBaseV1 : kBaseV3); }

DebertaNetwork RandomNetwork(const DebertaConfig& config, const NetworkParts& parts) {
  DebertaNetwork network(config, parts);
  at::manual_seed(0);
  at::NoGradGuard no_grad;
  for (auto& item : network->named_parameters()) {
    if (item.key().find("LayerNorm.weight") != std::string::npos) {
      item.value().fill_(1.0);
    } else {
      item.value().normal_(0.0, 0.02);
    }
  }
  return network;
}

}  // namespace deberta::model
