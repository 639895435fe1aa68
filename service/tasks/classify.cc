// The Classify task: checks, tasks, and the answer.
#include "service/tasks/classify.h"

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "service/engine_task.h"
#include "service/tasks/input_windows.h"

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
  absl::StatusOr<WindowAggregate> aggregate = WindowAggregateOf(request.long_input());
  if (!aggregate.ok()) return aggregate.status();
  out.aggregate = *aggregate;
  absl::StatusOr<int64_t> window_limit = WindowLimit(request.long_input(), options);
  if (!window_limit.ok()) return window_limit.status();
  out.sequences.reserve(n);
  std::optional<TextLimits> limits;  // Resolved at the first text sequence.
  int64_t tokens = 0;
  for (int i = 0; i < n; ++i) {
    ClassifyInput input;
    const pb::Sequence& in = request.sequences(i);
    if (IsText(in)) {
      if (!limits) {
        absl::StatusOr<TextLimits> resolved =
            ResolveTextLimits(request.truncation(), request.max_length(), info, options);
        if (!resolved.ok()) return resolved.status();
        limits = *resolved;
      }
      absl::StatusOr<InputWindows> windows = EncodeInWindows(in, request.long_input(), *window_limit,
                                                             WindowedText::kSecond, *limits, info, options);
      if (!windows.ok()) return ForSequence(i, windows.status());
      input.sequences = std::move(windows->sequences);
      input.num_tokens = windows->num_tokens;
      input.truncated = windows->truncated;
    } else {
      if (WantsWindows(request.long_input())) {
        return ForSequence(i, absl::InvalidArgumentError("long_input windows need text; token ids run as sent"));
      }
      absl::StatusOr<model::Sequence> sequence = PrepareSequence(in, info, options);
      if (!sequence.ok()) return ForSequence(i, sequence.status());
      input.num_tokens = static_cast<int32_t>(sequence->token_ids.size());
      input.sequences.push_back(*std::move(sequence));
    }
    tokens += TotalTokens(input.sequences);
    out.sequences.push_back(std::move(input));
  }
  if (absl::Status s = CheckRequestTokens(tokens, options); !s.ok()) return s;
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

void WriteWindowedClassification(const std::vector<float>& scores, int top_k,
                                 const std::vector<std::string>& labels, pb::Classification* out) {
  const int n = static_cast<int>(scores.size());
  const std::vector<int> order = OrderByScore(scores);
  for (float score : scores) out->add_probabilities(score);
  for (int k = 0; k < top_k && k < n; ++k) {
    const int id = order[k];
    pb::LabelScore* label = out->add_labels();
    label->set_label_id(id);
    label->set_label(id < static_cast<int>(labels.size()) ? labels[id] : "");
    label->set_probability(scores[id]);
  }
}

absl::StatusOr<TaskWork> StartClassify(const TaskEnv& env, const pb::ClassifyRequest& request,
                                       pb::ClassifyResponse* response) {
  response->set_request_id(request.request_id());
  absl::StatusOr<ClassifyInputs> built = BuildClassifyInputs(request, env.info, env.requests);
  if (!built.ok()) return built.status();
  TaskWork work;
  const std::vector<std::string>* labels = &env.info.labels;
  const int top_k = built->top_k;
  // Per windowed input: its slot and each window's scores, combined once
  // all are back.
  struct Windowed {
    pb::Classification* slot;
    std::vector<std::vector<float>> scores;
  };
  auto windowed = std::make_shared<std::vector<Windowed>>();
  for (ClassifyInput& input : built->sequences) {
    pb::Classification* slot = response->add_results();
    slot->set_num_tokens(input.num_tokens);
    slot->set_truncated(input.truncated);
    slot->set_num_windows(static_cast<int32_t>(input.sequences.size()));
    if (input.sequences.size() == 1) {
      work.tasks.push_back(std::make_unique<ClassifyTask>(
          std::move(input.sequences.front()),
          [slot, labels, top_k](model::ClassifyOutput output) { WriteClassification(output, top_k, *labels, slot); }));
      continue;
    }
    const size_t i = windowed->size();
    windowed->push_back({slot, std::vector<std::vector<float>>(input.sequences.size())});
    for (size_t w = 0; w < input.sequences.size(); ++w) {
      work.tasks.push_back(std::make_unique<ClassifyTask>(
          std::move(input.sequences[w]),
          [windowed, i, w](model::ClassifyOutput output) { (*windowed)[i].scores[w] = std::move(output.probabilities); }));
    }
  }
  if (!windowed->empty()) {
    work.complete = [windowed, labels, top_k, aggregate = built->aggregate]() {
      for (const Windowed& input : *windowed) {
        WriteWindowedClassification(AggregateWindowScores(input.scores, aggregate), top_k, *labels, input.slot);
      }
      return absl::OkStatus();
    };
  }
  return work;
}

}  // namespace deberta::service
