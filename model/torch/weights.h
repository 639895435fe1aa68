// Loading Hugging Face / authors' checkpoints into DebertaNetwork: maps the
// checkpoint's key names (with or without the "deberta." prefix, the legacy
// "cls.predictions.*" MLM head) onto the network's parameter names, checks
// every shape and dtype, converts to float32, and reports each missing key,
// wrong shape and unused key.
#ifndef DEBERTA_MODEL_TORCH_WEIGHTS_H_
#define DEBERTA_MODEL_TORCH_WEIGHTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/safetensors.h"
#include "model/torch/deberta_model.h"

namespace deberta::model {

// The network parameter a checkpoint key feeds, or "" for keys inference
// never uses (position_ids, the RTD head, the tied decoder copy).
std::string NetworkParameterName(const std::string& checkpoint_key);

// Which optional parts the checkpoint holds, decided from its key names
// (and, for a token classifier, config.json's architectures: docs/tasks.md 1.1).
NetworkParts DetectNetworkParts(const SafetensorsFile& checkpoint, const DebertaConfig& config);

struct LoadReport {
  std::vector<std::string> unused_keys;  // In the checkpoint, not loaded.
  bool legacy_mlm_head = false;          // Head came from cls.predictions.*.
};

// Copies every parameter of `network` from `checkpoint`. InvalidArgument
// naming each missing key, wrong shape and unsupported dtype; nothing is
// partially trusted on error.
absl::StatusOr<LoadReport> LoadWeights(const SafetensorsFile& checkpoint,
                                       DebertaNetworkImpl& network);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_WEIGHTS_H_
