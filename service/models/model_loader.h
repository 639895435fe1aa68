// Loading one model version (a ModelSource) into memory: its engine
// replicas, its tokenizer and special tokens, and the estimate of the
// memory it will take that --memory_limit is checked against. The engines
// come from an EngineFactory (LibTorch's in the server, a fake in tests),
// so this file stays torch-free.
#ifndef DEBERTA_SERVICE_MODELS_MODEL_LOADER_H_
#define DEBERTA_SERVICE_MODELS_MODEL_LOADER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "model/engine.h"
#include "model/special_tokens.h"
#include "model/tokenizer.h"
#include "service/models/model_repository.h"

namespace deberta::service {

// Creates one engine replica (model::CreateTorchEngine in the server).
using EngineFactory = std::function<absl::StatusOr<std::unique_ptr<model::Engine>>(const model::EngineOptions&)>;

// A model version in memory, not yet serving.
struct LoadedModel {
  std::vector<std::unique_ptr<model::Engine>> engines;  // Its replicas; at least one.
  std::unique_ptr<model::Tokenizer> tokenizer;          // Null: token ids only.
  model::SpecialTokens special_tokens;
};

// Loads `source`: its tokenizer (none is not an error: token ids only), its
// special tokens (from the tokenizer, else the checkpoint's files over
// `default_tokens`), then its replicas from `create`. The errors of
// each step, prefixed with the model's name and version.
absl::StatusOr<LoadedModel> LoadModelSource(const ModelSource& source, const EngineFactory& create,
                                            const model::SpecialTokens& default_tokens);

// Bytes `source` will hold once loaded: per replica, its weights in their
// compute dtype (the checkpoint's parameter count from config.json) and the
// activations of the largest batch its limits allow (hidden states, the
// feed-forward's and the attention's scores of one layer at a time, with a
// factor for the allocator's slack). An estimate, documented as one in
// docs/models.md with its measured error; InvalidArgument when config.json
// cannot be read.
absl::StatusOr<int64_t> EstimateModelMemory(const ModelSource& source);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_MODELS_MODEL_LOADER_H_
