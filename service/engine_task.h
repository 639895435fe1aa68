// EngineTask: a BatchTask whose batch is one call of a model::Engine method
// (Classify, FillMask, and the next heads): the task holds its input and,
// once the batch ran, its output, which goes to the writer the task file
// gave it. A new head is one alias here.
#ifndef DEBERTA_SERVICE_ENGINE_TASK_H_
#define DEBERTA_SERVICE_ENGINE_TASK_H_

#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "model/engine.h"
#include "service/batch_task.h"

namespace deberta::service {

// Tokens of an engine input.
inline size_t TokenCount(const model::Sequence& sequence) { return sequence.token_ids.size(); }
inline size_t TokenCount(const model::MaskedSequence& masked) { return masked.sequence.token_ids.size(); }

template <typename Input, typename Output, Endpoint kQueue,
          absl::StatusOr<std::vector<Output>> (model::Engine::*kCall)(absl::Span<const Input>,
                                                                      const model::Engine::RowsWanted&)>
class EngineTask final : public BatchTask {
 public:
  // `write` receives the output when the task succeeds (on the batcher
  // thread); it may be null.
  EngineTask(Input input, std::function<void(Output)> write)
      : BatchTask(kQueue, &RunEngineBatch), input_(std::move(input)), write_(std::move(write)) {}

  size_t length() const override { return TokenCount(input_); }

 private:
  // One engine call for the whole batch. The engine must answer one output
  // per input; anything else fails the batch rather than mismatch answers.
  static absl::Status RunEngineBatch(model::Engine& engine, const std::vector<BatchTask*>& batch,
                                     const model::Engine::RowsWanted& rows_wanted) {
    std::vector<Input> inputs;
    inputs.reserve(batch.size());
    for (BatchTask* task : batch) inputs.push_back(static_cast<EngineTask*>(task)->input_);
    absl::StatusOr<std::vector<Output>> outputs = (engine.*kCall)(inputs, rows_wanted);
    if (!outputs.ok()) return outputs.status();
    if (outputs->size() != batch.size()) {
      return absl::InternalError(
          absl::StrCat("the engine returned ", outputs->size(), " outputs for ", batch.size(), " sequences"));
    }
    for (size_t i = 0; i < batch.size(); ++i) static_cast<EngineTask*>(batch[i])->output_ = std::move((*outputs)[i]);
    return absl::OkStatus();
  }

  void WriteOutput() override {
    if (write_) write_(std::move(output_));
  }

  const Input input_;
  Output output_;
  const std::function<void(Output)> write_;
};

using ClassifyTask = EngineTask<model::Sequence, model::ClassifyOutput, Endpoint::kClassify, &model::Engine::Classify>;
using FillMaskTask =
    EngineTask<model::MaskedSequence, model::FillMaskOutput, Endpoint::kFillMask, &model::Engine::FillMask>;
using ClassifyTokensTask = EngineTask<model::Sequence, model::TokenClassifyOutput, Endpoint::kClassifyTokens,
                                      &model::Engine::ClassifyTokens>;

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_ENGINE_TASK_H_
