// Turns EngineOptions into a ready DebertaNetwork: reads config.json and
// model.safetensors (or builds the demo model), loads and checks the
// weights, decides EMD (docs/deberta-model.md section 9.3), moves to the device and prepares the
// compute dtype. Shared by TorchEngine and the offline `deberta-cli run`.
#ifndef DEBERTA_MODEL_TORCH_NETWORK_LOADER_H_
#define DEBERTA_MODEL_TORCH_NETWORK_LOADER_H_

#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/engine.h"
#include "model/engine_options.h"
#include "model/safetensors.h"
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

// options.device parsed and checked against what this process sees (a
// visible CUDA device of that index); int8 refused on CUDA.
absl::StatusOr<c10::Device> CheckedDevice(const EngineOptions& options);

// A model folder's config.json and weights (model.safetensors, or the
// shards of its index), or the demo model's, checked to fit each other.
struct CheckpointFolder {
  DebertaConfig config;
  std::unique_ptr<SafetensorsFile> weights;
  bool demo = false;
};
absl::StatusOr<CheckpointFolder> ReadCheckpointFolder(const std::string& model);

// What the EMD decision reads of a loaded checkpoint.
struct EmdEvidence {
  bool has_mlm_head = false;
  bool can_run = false;           // DebertaNetworkImpl::CanRunEmd.
  bool legacy_mlm_head = false;   // The head came from cls.predictions.* (LoadReport).
  bool has_legacy_field = false;  // config.json has `legacy` (re-saved by a newer Hugging Face).
};
// Whether fill-mask runs the Enhanced Mask Decoder (docs/deberta-model.md
// section 9.3). InvalidArgument when `mode` asks for EMD and it cannot run.
absl::StatusOr<bool> ChooseEmd(EmdMode mode, const EmdEvidence& evidence);

// CheckedDevice, ReadCheckpointFolder, the network built and its weights
// loaded, ChooseEmd, then moved to the device and prepared in the compute
// dtype (Prepare).
absl::StatusOr<LoadedNetwork> LoadNetwork(const EngineOptions& options);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_NETWORK_LOADER_H_
