// Turns EngineOptions into a ready DebertaNetwork: reads config.json and
// model.safetensors (or builds the demo model), loads and checks the
// weights, decides EMD (docs/deberta-model.md section 9.3), moves to the device and prepares the
// compute dtype. Shared by TorchEngine and the offline `deberta-cli run`.
#ifndef DEBERTA_MODEL_TORCH_NETWORK_LOADER_H_
#define DEBERTA_MODEL_TORCH_NETWORK_LOADER_H_

#include <c10/core/Device.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/engine.h"
#include "model/engine_options.h"
#include "model/torch/deberta_model.h"

namespace deberta::model {

struct LoadedNetwork {
  DebertaConfig config;
  DebertaNetwork network{nullptr};
  c10::Device device{c10::kCPU};
  ModelInfo info;
  std::vector<std::string> unused_keys;
};

// "cpu", "cuda" or "cuda:N". FailedPrecondition if CUDA is asked for but
// this LibTorch has none or the index does not exist.
absl::StatusOr<c10::Device> ParseDevice(const std::string& name);

absl::StatusOr<LoadedNetwork> LoadNetwork(const EngineOptions& options);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_NETWORK_LOADER_H_
