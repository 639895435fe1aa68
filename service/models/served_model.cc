// ServedModel: a model version's parts, and the count of its calls.
#include "service/models/served_model.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "service/clock.h"

namespace deberta::service {
namespace {

// What the service promises about the model (GetModelInfo, validation)
// must hold whichever replica runs a request.
absl::Status CheckReplicasAreOneModel(const std::vector<std::unique_ptr<model::Engine>>& engines) {
  if (engines.empty() || engines.front() == nullptr) return absl::InvalidArgumentError("the model has no engine");
  const model::ModelInfo& first = engines.front()->info();
  for (size_t r = 1; r < engines.size(); ++r) {
    if (engines[r] == nullptr) return absl::InvalidArgumentError(absl::StrCat("replica ", r, " has no engine"));
    const model::ModelInfo& info = engines[r]->info();
    if (info.name != first.name || info.model_type != first.model_type || info.vocab_size != first.vocab_size ||
        info.labels != first.labels || info.type_vocab_size != first.type_vocab_size ||
        info.max_sequence_length != first.max_sequence_length || info.dtype != first.dtype ||
        info.emd_enabled != first.emd_enabled || info.has_classifier != first.has_classifier ||
        info.has_mlm_head != first.has_mlm_head) {
      return absl::FailedPreconditionError(
          absl::StrCat("replica ", r, " (", info.name, ", ", info.dtype, ") is not the same model as replica 0 (",
                       first.name, ", ", first.dtype, ")"));
    }
  }
  return absl::OkStatus();
}

TaskEnv MakeTaskEnv(const model::ModelInfo& info, const ServedModel::Options& options,
                    const model::SpecialTokens& special_tokens, const model::Tokenizer* tokenizer) {
  TaskEnv env;
  env.info = info;
  env.info.name = options.name;  // A version's folder is "1", "2", ...: the model's name instead.
  env.requests = options.requests;
  env.requests.tokenizer = tokenizer;
  env.requests.mask_token_id = special_tokens.mask;
  env.special_tokens = special_tokens;
  env.server_version = options.server_version;
  env.model_version = options.version;
  return env;
}

std::vector<model::Engine*> Borrow(const std::vector<std::unique_ptr<model::Engine>>& engines) {
  std::vector<model::Engine*> replicas;
  for (const auto& engine : engines) replicas.push_back(engine.get());
  return replicas;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServedModel>> ServedModel::Create(const Options& options, LoadedModel loaded,
                                                                 std::shared_ptr<prometheus::Registry> registry) {
  if (absl::Status s = CheckReplicasAreOneModel(loaded.engines); !s.ok()) return s;
  const model::ModelInfo& info = loaded.engines.front()->info();
  if (loaded.tokenizer != nullptr && loaded.tokenizer->vocab_size() > info.vocab_size) {
    return absl::FailedPreconditionError(absl::StrCat("the tokenizer has ", loaded.tokenizer->vocab_size(),
                                                      " ids but the model's vocabulary only ", info.vocab_size));
  }
  return std::unique_ptr<ServedModel>(new ServedModel(options, std::move(loaded), std::move(registry)));
}

ServedModel::ServedModel(const Options& options, LoadedModel loaded, std::shared_ptr<prometheus::Registry> registry)
    : options_(options),
      engines_(std::move(loaded.engines)),
      tokenizer_(std::move(loaded.tokenizer)),
      env_(MakeTaskEnv(engines_.front()->info(), options, loaded.special_tokens, tokenizer_.get())),
      metrics_(std::move(registry), {options.name, std::to_string(options.version)}) {
  metrics_.SetBatcherLimits(options.batcher.max_batch_size, options.batcher.max_batch_tokens,
                            options.batcher.max_enqueued_tasks);
  metrics_.SetModelReady(false);
  batcher_ = std::make_unique<Batcher>(options.batcher, Borrow(engines_), RealClock::Get(), &metrics_);
}

ServedModel::~ServedModel() { batcher_->Stop(); }

absl::Status ServedModel::Start() {
  if (absl::Status s = batcher_->Start(); !s.ok()) return s;
  metrics_.SetModelReady(true);
  return absl::OkStatus();
}

void ServedModel::Stop() {
  batcher_->Stop();
  metrics_.SetModelReady(false);
}

std::string ServedModel::Task() const {
  const model::ModelInfo& info = env_.info;
  std::vector<std::string> tasks;
  if (info.has_classifier) tasks.push_back(info.labels.size() == 1 ? "rerank" : "classify");
  if (info.has_token_classifier) tasks.push_back("token_classification");
  if (info.has_mlm_head) tasks.push_back("fill_mask");
  return absl::StrJoin(tasks, ",");
}

}  // namespace deberta::service
