// Model loading: config, checkpoint, EMD decision, device and dtype.
#include "model/torch/network_loader.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/cuda.h>

#include <c10/util/Logging.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "model/checkpoint_files.h"
#include "model/demo_model.h"
#include "model/runtime.h"
#include "model/safetensors.h"
#include "model/status_macros.h"
#include "model/torch/cpu_backend.h"
#include "model/torch/int8_linear.h"
#include "model/torch/weights.h"

namespace deberta::model {
namespace {

absl::StatusOr<at::ScalarType> ScalarTypeFor(ComputeDType dtype, const c10::Device& device) {
  switch (dtype) {
    case ComputeDType::kFloat32: return at::kFloat;
    case ComputeDType::kBFloat16:
      if (device.is_cpu() && CpuComputeDType(at::kBFloat16) != at::kBFloat16) {
        LOG(WARNING) << "bfloat16 asked for, but this CPU has no bfloat16 kernels (" << ProbeCpu().usable.Names()
                     << "; oneDNN " << ProbeCpu().onednn_isa << "): running float32, which is faster here "
                     << "and as accurate, with float32's memory (docs/cpu-backend.md)";
        return at::kFloat;
      }
      return at::kBFloat16;
    case ComputeDType::kFloat16:
      if (!device.is_cuda()) {
        return absl::InvalidArgumentError(
            "float16 is only supported on cuda devices; use bfloat16 on cpu");
      }
      return at::kHalf;
    case ComputeDType::kInt8:
      // The encoder's linear layers are quantized after Prepare (CPU only:
      // LoadNetwork refuses int8 on cuda first).
      return Int8ComputeDType();
  }
  return absl::InvalidArgumentError("unknown dtype");
}

// LibTorch appends a C++ backtrace to its messages.
std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// Every weight of the word embeddings and of each layer's attention and
// feed-forward projections is in the checkpoint, so together they cannot
// outnumber the checkpoint's elements.
absl::Status CheckConfigFitsCheckpoint(const DebertaConfig& config, const SafetensorsFile& checkpoint) {
  int64_t checkpoint_elements = 0;
  for (const std::string& name : checkpoint.Names()) {
    if (auto view = checkpoint.Get(name); view.ok()) checkpoint_elements += view->NumElements();
  }
  const int64_t h = config.hidden_size, a = config.num_attention_heads * config.attention_head_size;
  const int64_t per_layer = 4 * h * a + 2 * h * config.intermediate_size;
  const int64_t needed = config.vocab_size * config.embedding_size + config.num_hidden_layers * per_layer;
  if (needed > checkpoint_elements) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config.json describes a model of at least ", needed, " weights (vocab_size ", config.vocab_size,
        ", hidden_size ", h, ", ", config.num_hidden_layers, " layers) but the checkpoint holds ",
        checkpoint_elements, ": config and checkpoint do not match"));
  }
  return absl::OkStatus();
}

// What ModelInfo says of the loaded model.
ModelInfo DescribeModel(const EngineOptions& options, bool demo, const DebertaConfig& config,
                        const NetworkParts& parts, bool emd, const c10::Device& device) {
  ModelInfo info;
  info.name = demo ? "demo" : std::filesystem::path(options.model).lexically_normal().filename().string();
  if (info.name.empty()) info.name = std::filesystem::path(options.model).parent_path().filename().string();
  info.model_type = config.model_type;
  info.is_demo = demo;
  info.description = demo ? "built-in demo model: deterministic random weights, outputs carry no meaning"
                          : absl::StrCat("checkpoint ", options.model);
  info.labels = config.labels;
  info.problem_type = config.problem_type;
  info.vocab_size = config.vocab_size;
  info.type_vocab_size = config.type_vocab_size;
  info.max_sequence_length =
      options.max_sequence_length > 0 ? options.max_sequence_length : config.max_position_embeddings;
  info.num_layers = config.num_hidden_layers;
  info.hidden_size = config.hidden_size;
  info.device = device.str();
  info.dtype = ComputeDTypeName(options.dtype);
  info.has_classifier = parts.classifier;
  info.has_mlm_head = parts.mlm_head;
  info.has_token_classifier = parts.token_classifier;
  info.emd_enabled = emd;
  if (device.is_cpu()) info.cpu_kernels = DescribeCpuBackend();
  return info;
}

}  // namespace

absl::StatusOr<c10::Device> ParseDevice(const std::string& name) {
  if (name == "cpu") return c10::Device(c10::kCPU);
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    int index = 0;
    if (name.size() > 4 && !absl::SimpleAtoi(name.substr(5), &index)) {
      return absl::InvalidArgumentError(absl::StrCat("bad device '", name, "' (expected cuda:N)"));
    }
    // Whether this LibTorch was built with CUDA (its CUDA library registered
    // its hooks); at::hasCUDA() would also say false for a CUDA build on a
    // machine without a GPU, which the device count below reports.
    if (!at::detail::getCUDAHooks().hasCUDART()) {
      return absl::FailedPreconditionError(
          absl::StrCat("device ", name, " requested but this LibTorch build has no CUDA support"));
    }
    return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device '", name, "' (expected cpu or cuda:N)"));
}

absl::StatusOr<c10::Device> CheckedDevice(const EngineOptions& options) {
  // Before the device is looked at: the same answer whether or not this
  // LibTorch has CUDA.
  if (options.dtype == ComputeDType::kInt8 && absl::StartsWith(options.device, "cuda")) {
    return absl::InvalidArgumentError("int8 is only supported on the cpu; use float16 or bfloat16 on cuda");
  }
  DEBERTA_ASSIGN_OR_RETURN(const c10::Device device, ParseDevice(options.device));
  if (!device.is_cuda()) return device;
  const auto visible = static_cast<int64_t>(torch::cuda::device_count());
  if (visible == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "device ", options.device, " requested but no CUDA device is visible to this process "
        "(no GPU, no NVIDIA driver, or none passed to the container: docker --gpus, CDI, "
        "CUDA_VISIBLE_DEVICES)"));
  }
  if (device.index() >= visible) {
    return absl::FailedPreconditionError(absl::StrCat("device ", options.device, " does not exist: ",
                                                      visible, " CUDA devices are visible"));
  }
  return device;
}

absl::StatusOr<CheckpointFolder> ReadCheckpointFolder(const std::string& model) {
  CheckpointFolder folder;
  folder.demo = model == kDemoModelName;
  if (folder.demo) {
    DEBERTA_ASSIGN_OR_RETURN(folder.config, ParseDebertaConfig(DemoConfigJson()));
    DEBERTA_ASSIGN_OR_RETURN(folder.weights, SafetensorsFile::FromBuffer(DemoCheckpointBytes(), "demo"));
  } else {
    const std::filesystem::path dir(model);
    if (!std::filesystem::is_directory(dir)) {
      return absl::NotFoundError(absl::StrCat("model folder '", model, "' does not exist (or pass 'demo')"));
    }
    DEBERTA_ASSIGN_OR_RETURN(folder.config, LoadDebertaConfig((dir / "config.json").string()));
    DEBERTA_ASSIGN_OR_RETURN(folder.weights, OpenCheckpointWeights(dir.string()));
  }
  // The network is allocated from config.json's sizes, then filled from the
  // checkpoint: sizes the checkpoint cannot hold are refused before that.
  DEBERTA_RETURN_IF_ERROR(CheckConfigFitsCheckpoint(folder.config, *folder.weights));
  return folder;
}

absl::StatusOr<bool> ChooseEmd(EmdMode mode, const EmdEvidence& evidence) {
  if (!evidence.has_mlm_head) {
    if (mode == EmdMode::kEmd) return absl::InvalidArgumentError("EMD requested but the checkpoint has no MLM head");
    return false;
  }
  switch (mode) {
    // docs/deberta-model.md section 9.3: EMD iff the head is the authors'
    // layout and the checkpoint was not re-saved by a Hugging Face version
    // that knows `legacy`.
    case EmdMode::kAuto: return evidence.can_run && !evidence.legacy_mlm_head && !evidence.has_legacy_field;
    case EmdMode::kPlain: return false;
    case EmdMode::kEmd:
      if (!evidence.can_run) {
        return absl::InvalidArgumentError(
            "EMD requested but this model cannot run it (needs position_embeddings, "
            "position_biased_input false, at least 2 layers and embedding_size == hidden_size)");
      }
      return true;
  }
  return absl::InvalidArgumentError("unknown EMD mode");
}

absl::StatusOr<LoadedNetwork> LoadNetwork(const EngineOptions& options) {
  LoadedNetwork loaded;
  DEBERTA_ASSIGN_OR_RETURN(loaded.device, CheckedDevice(options));
  DEBERTA_ASSIGN_OR_RETURN(const at::ScalarType compute_dtype, ScalarTypeFor(options.dtype, loaded.device));
  DEBERTA_ASSIGN_OR_RETURN(CheckpointFolder folder, ReadCheckpointFolder(options.model));
  loaded.config = folder.config;
  const DebertaConfig& config = loaded.config;
  if (options.max_sequence_length > config.max_position_embeddings) {
    return absl::InvalidArgumentError(absl::StrCat("max_sequence_length ", options.max_sequence_length,
                                                   " exceeds the model's max_position_embeddings ",
                                                   config.max_position_embeddings));
  }

  const NetworkParts parts = DetectNetworkParts(*folder.weights, config);
  LoadReport report;
  try {
    loaded.network = DebertaNetwork(config, parts);
    DEBERTA_ASSIGN_OR_RETURN(report, LoadWeights(*folder.weights, *loaded.network));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("not enough memory to build the model of config.json");
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("building the model of config.json: ", FirstLine(e.what())));
  }
  loaded.unused_keys = report.unused_keys;
  if (!report.unused_keys.empty()) {
    // Often harmless (buffers such as position_ids, heads this server does
    // not use), but a misnamed weight shows up here first.
    LOG(WARNING) << options.model << ": " << report.unused_keys.size()
                 << " checkpoint tensors are not used: " << absl::StrJoin(report.unused_keys, ", ");
  }
  DEBERTA_ASSIGN_OR_RETURN(const bool emd,
                           ChooseEmd(options.emd, {parts.mlm_head, loaded.network->CanRunEmd(),
                                                   report.legacy_mlm_head, config.has_legacy_field}));

  // Process-wide settings are ConfigureRuntime's; int8 checks its choice.
  if (options.dtype == ComputeDType::kInt8) DEBERTA_RETURN_IF_ERROR(RequireOnednnQuantizedEngine());
  try {
    loaded.network->to(loaded.device);
    loaded.network->Prepare(compute_dtype, /*int8_encoder=*/options.dtype == ComputeDType::kInt8);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("preparing the model on ", options.device, ": ", e.what()));
  }
  // Loading and Prepare freed the float32 weights they converted (all of
  // them for bfloat16, the encoder's for int8), which ConfigureRuntime's
  // heap settings kept resident: int8 held more memory than float32.
  ReleaseFreeMemory();
  loaded.info = DescribeModel(options, folder.demo, config, parts, emd, loaded.device);
  return loaded;
}

}  // namespace deberta::model
