// The Classify task: checks, tasks, and the answer.
#include "service/tasks/classify.h"

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "service/engine_task.h"

namespace deberta::service {

namespace pb = serving::v1;

absl::StatusOr<ClassifyInputs> BuildClassifyInputs(const pb::ClassifyRequest& request,
                                                   const model::ModelInfo& info, const RequestOptions& options) {
  if (!info.has_classifier) {
    return absl::FailedPreconditionError("the served model has no sequence-classification head");
  }
  const int n = request.sequences_size();
  if (absl::Status s = CheckSequenceCount(n, options); !s.ok()) return s;
  const int labels = static_cast<int>(info.labels.size());
  if (request.top_k() < 0 || request.top_k() > labels) {
    return absl::InvalidArgumentError(
        absl::StrCat("top_k is ", request.top_k(), "; it must be in [0, ", labels, "]"));
  }
  ClassifyInputs out;
  out.top_k = request.top_k() == 0 ? labels : request.top_k();
  out.sequences.reserve(n);
  std::optional<TextLimits> limits;  // Resolved at the first text sequence.
  for (int i = 0; i < n; ++i) {
    ClassifyInput input;
    const pb::Sequence& in = request.sequences(i);
    absl::StatusOr<model::Sequence> sequence;
    if (IsText(in)) {
      if (!limits) {
        absl::StatusOr<TextLimits> resolved =
            ResolveTextLimits(request.truncation(), request.max_length(), info, options);
        if (!resolved.ok()) return resolved.status();
        limits = *resolved;
      }
      sequence = EncodeSequence(in, *limits, info, options, &input.truncated);
    } else {
      sequence = PrepareSequence(in, info, options);
    }
    if (!sequence.ok()) return ForSequence(i, sequence.status());
    input.sequence = *std::move(sequence);
    out.sequences.push_back(std::move(input));
  }
  return out;
}

void WriteClassification(const model::ClassifyOutput& output, int top_k,
                         const std::vector<std::string>& labels, pb::Classification* out) {
  const int n = static_cast<int>(output.logits.size());
  const std::vector<int> order = OrderByScore(output.probabilities);
  for (int k = 0; k < n; ++k) {
    out->add_logits(output.logits[k]);
    out->add_probabilities(output.probabilities[k]);
  }
  for (int k = 0; k < top_k && k < n; ++k) {
    const int id = order[k];
    pb::LabelScore* label = out->add_labels();
    label->set_label_id(id);
    label->set_label(id < static_cast<int>(labels.size()) ? labels[id] : "");
    label->set_probability(output.probabilities[id]);
    label->set_logit(output.logits[id]);
  }
}

absl::StatusOr<TaskWork> StartClassify(const TaskEnv& env, const pb::ClassifyRequest& request,
                                       pb::ClassifyResponse* response) {
  response->set_request_id(request.request_id());
  absl::StatusOr<ClassifyInputs> built = BuildClassifyInputs(request, env.info, env.requests);
  if (!built.ok()) return built.status();
  TaskWork work;
  for (ClassifyInput& input : built->sequences) {
    pb::Classification* slot = response->add_results();
    slot->set_num_tokens(static_cast<int32_t>(input.sequence.token_ids.size()));
    slot->set_truncated(input.truncated);
    const std::vector<std::string>* labels = &env.info.labels;
    work.tasks.push_back(std::make_unique<ClassifyTask>(
        std::move(input.sequence), [slot, labels, top_k = built->top_k](model::ClassifyOutput output) {
          WriteClassification(output, top_k, *labels, slot);
        }));
  }
  return work;
}

}  // namespace deberta::service
