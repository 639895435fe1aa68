// Loading a model version, and estimating its memory.
#include "service/models/model_loader.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "model/config.h"
#include "model/demo_model.h"
#include "model/demo_tokenizer.h"
#include "model/replica_options.h"

namespace deberta::service {
namespace {

absl::Status Prefixed(const ModelSource& source, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat("model ", source.name, " version ", source.version, ": ", status.message()));
}

}  // namespace

absl::StatusOr<LoadedModel> LoadModelSource(const ModelSource& source, const EngineFactory& create,
                                            const model::SpecialTokens& default_tokens) {
  LoadedModel loaded;
  const model::EngineOptions& engine = source.settings.engine;
  const bool demo = engine.model == model::kDemoModelName;
  absl::StatusOr<std::unique_ptr<model::Tokenizer>> tokenizer =
      demo ? model::DemoTokenizer() : model::LoadTokenizer(engine.model);
  if (tokenizer.ok()) {
    loaded.tokenizer = *std::move(tokenizer);
    loaded.special_tokens = loaded.tokenizer->special_tokens();
  } else if (absl::IsFailedPrecondition(tokenizer.status())) {
    // No tokenizer files: token ids only, with the checkpoint's special ids.
    absl::StatusOr<model::SpecialTokens> special = model::ReadSpecialTokens(engine.model, default_tokens);
    if (!special.ok()) return Prefixed(source, special.status());
    loaded.special_tokens = *special;
  } else {
    return Prefixed(source, tokenizer.status());
  }
  absl::StatusOr<std::vector<model::EngineOptions>> replicas =
      model::ReplicaOptions(engine, source.settings.replicas, std::max(1, engine.num_threads));
  if (!replicas.ok()) return Prefixed(source, replicas.status());
  for (const model::EngineOptions& options : *replicas) {
    absl::StatusOr<std::unique_ptr<model::Engine>> created = create(options);
    if (!created.ok()) return Prefixed(source, created.status());
    loaded.engines.push_back(*std::move(created));
  }
  return loaded;
}

absl::StatusOr<int64_t> EstimateModelMemory(const ModelSource& source) {
  const model::EngineOptions& engine = source.settings.engine;
  if (engine.model == model::kDemoModelName) return int64_t{64} << 20;  // A few MB of weights.
  absl::StatusOr<model::DebertaConfig> loaded =
      model::LoadDebertaConfig((std::filesystem::path(engine.model) / "config.json").string());
  if (!loaded.ok()) return Prefixed(source, loaded.status());
  const model::DebertaConfig& c = *loaded;
  const int64_t h = c.hidden_size;
  const int64_t e = c.embedding_size > 0 ? c.embedding_size : h;
  const int64_t layer = 4 * h * c.AllHeadSize() + 2 * h * c.intermediate_size + 8 * h;
  const int64_t embeddings = c.vocab_size * e + c.max_position_embeddings * h + 2 * c.RelativeSpan() * h;
  const int64_t heads = h * h + c.vocab_size + h * std::max<int64_t>(1, static_cast<int64_t>(c.labels.size()));
  int64_t layer_bytes = 4;  // float32
  switch (engine.dtype) {
    case model::ComputeDType::kBFloat16:
    case model::ComputeDType::kFloat16:
      layer_bytes = 2;
      break;
    case model::ComputeDType::kInt8:
      layer_bytes = 1;
      break;
    case model::ComputeDType::kFloat32:
      break;
  }
  // Embeddings and heads stay float32 on the CPU; the layers take the dtype.
  const int64_t weights = c.num_hidden_layers * layer * layer_bytes + (embeddings + heads) * 4;
  // Activations of the largest batch, one layer at a time: the hidden
  // states and their projections, the feed-forward's inner width, and the
  // attention's three score tensors (content and both relative terms).
  const int64_t tokens = source.settings.batcher.max_batch_tokens;
  const int64_t longest = std::min<int64_t>(
      tokens, engine.max_sequence_length > 0 ? engine.max_sequence_length : c.max_position_embeddings);
  const int64_t activations = tokens * (8 * h + 2 * c.intermediate_size) * 4 +
                              tokens * longest * c.num_attention_heads * 3 * 4;
  // The allocator's slack and the runtime's own buffers: a quarter more.
  const int64_t per_replica = (weights + activations) * 5 / 4;
  return per_replica * std::max(1, source.settings.replicas);
}

}  // namespace deberta::service
