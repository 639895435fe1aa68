// The model repository (--model_repository=DIR): each subfolder is one
// model, named by the folder, holding a checkpoint (config.json, weights,
// tokenizer files) or numbered version folders (1/, 2/, ...), and an
// optional serving.json with that model's own settings. This file reads the
// folder into ModelSources: what to load, from where, with which settings.
// It loads nothing (model_loader.h does).
#ifndef DEBERTA_SERVICE_MODELS_MODEL_REPOSITORY_H_
#define DEBERTA_SERVICE_MODELS_MODEL_REPOSITORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/engine_options.h"
#include "service/batcher.h"
#include "service/request_builder.h"

namespace deberta::service {

// A model's settings: each one the server's flag of the same meaning
// unless its serving.json says otherwise.
struct ModelSettings {
  model::EngineOptions engine;  // engine.model is the version's folder.
  int replicas = 1;
  // Whether serving.json set "threads" (else the model shares the cores
  // that the models which set theirs leave: see DivideThreads).
  bool threads_set = false;
  Batcher::Options batcher;
  RequestOptions requests;
};

// One version of one model, ready to load.
struct ModelSource {
  std::string name;     // The model's folder name (or --model_name).
  int64_t version = 1;  // Its numbered folder; 1 for a checkpoint folder.
  std::string folder;   // The checkpoint: config.json and weights.
  ModelSettings settings;
};

// serving.json's keys, in the order the docs list them.
inline constexpr const char* kServingKeys[] = {
    "version",        "dtype",          "device",        "replicas",         "threads",
    "max_batch_size", "max_batch_tokens", "max_queue_size", "batch_timeout_ms", "max_sequence_length",
    "warmup_shapes",  "max_windows",    "truncate"};

// `defaults` with the keys of a serving.json's text applied. InvalidArgument
// naming `file` and the key for an unknown key, a value of the wrong type
// or out of range. `pinned_version` gets "version" (0 when absent).
absl::StatusOr<ModelSettings> ApplyServingJson(absl::string_view text, const std::string& file,
                                               const ModelSettings& defaults, int64_t* pinned_version);

// The version a model folder serves: its highest numbered subfolder, or
// `pinned` when > 0 (NotFound when that folder is missing), or 1 when the
// folder is itself a checkpoint (config.json); NotFound when it is neither.
absl::StatusOr<ModelSource> ResolveVersion(const std::string& name, const std::string& model_folder,
                                           int64_t pinned);

// The model folders of `repository`, in name order (folders whose names
// start with '.' are skipped). NotFound when it cannot be read.
absl::StatusOr<std::vector<std::string>> ListModelNames(const std::string& repository);

// What a folder's files are now (their names, sizes and modification
// times): a version whose load failed is tried again once this changes.
std::string FolderStamp(const std::string& folder);

// Every model of `repository`, in name order, each with its serving.json
// applied over `defaults`. Folders whose names start with '.' are skipped
// (so a version can be written beside and renamed in). NotFound when the
// repository cannot be read; InvalidArgument for a bad serving.json; a
// model folder without a checkpoint is an error too, naming it.
absl::StatusOr<std::vector<ModelSource>> ScanRepository(const std::string& repository,
                                                        const ModelSettings& defaults);

// The source of one model: `repository`/`name` (a name that is not a plain
// folder name is InvalidArgument).
absl::StatusOr<ModelSource> ReadModel(const std::string& repository, const std::string& name,
                                      const ModelSettings& defaults);

// CPU threads per model: those whose settings set them keep theirs, the
// rest share what is left of `cores` equally (each at least 1). GPU models
// keep theirs (host threads) and are not counted. InvalidArgument naming
// the models when the CPU models' threads exceed `cores`, unless
// `allow_oversubscription`.
absl::Status DivideThreads(std::vector<ModelSource>& models, int cores, bool allow_oversubscription);

// "8G", "512M", "1.5GiB", "1000000" (bytes) -> bytes; 0 stays 0 (no limit).
absl::StatusOr<int64_t> ParseMemorySize(absl::string_view text);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_MODELS_MODEL_REPOSITORY_H_
