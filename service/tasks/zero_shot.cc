// The ZeroShotClassify task: pairs, tasks, scores and the answer.
#include "service/tasks/zero_shot.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "service/engine_task.h"

namespace deberta::service {

namespace pb = serving::v1;

absl::StatusOr<ZeroShotInputs> BuildZeroShotInputs(const pb::ZeroShotClassifyRequest& request,
                                                   const model::ModelInfo& info, const RequestOptions& options) {
  if (!info.has_classifier) {
    return absl::FailedPreconditionError("the served model has no sequence-classification head");
  }
  if (options.tokenizer == nullptr) {
    return absl::FailedPreconditionError("zero-shot classification needs the checkpoint's tokenizer files");
  }
  ZeroShotInputs out;
  for (size_t i = 0; i < info.labels.size(); ++i) {
    const std::string label = absl::AsciiStrToLower(info.labels[i]);
    if (out.entailment < 0 && absl::StartsWith(label, "entail")) out.entailment = static_cast<int>(i);
    if (out.contradiction < 0 && absl::StartsWith(label, "contra")) out.contradiction = static_cast<int>(i);
  }
  if (out.entailment < 0 || out.contradiction < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "zero-shot classification needs an NLI model: its labels (", absl::StrJoin(info.labels, ", "),
        ") have no entailment and contradiction"));
  }
  const int n = request.candidate_labels_size();
  if (request.text().empty()) return absl::InvalidArgumentError("text is empty");
  if (n == 0) return absl::InvalidArgumentError("no candidate_labels");
  if (n > options.max_sequences_per_request) {
    return absl::InvalidArgumentError(absl::StrCat("request has ", n, " candidate_labels; the maximum is ",
                                                   options.max_sequences_per_request));
  }
  const std::string tmpl = request.hypothesis_template().empty() ? "This example is {}." : request.hypothesis_template();
  const size_t slot = tmpl.find("{}");
  if (slot == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("hypothesis_template '", tmpl, "' has no {} for the label"));
  }
  absl::StatusOr<TextLimits> limits = ResolveTextLimits(request.truncation(), request.max_length(), info, options);
  if (!limits.ok()) return limits.status();
  for (int i = 0; i < n; ++i) {
    pb::Sequence pair;
    pair.set_text(request.text());
    pair.set_text_pair(absl::StrCat(tmpl.substr(0, slot), request.candidate_labels(i), tmpl.substr(slot + 2)));
    bool truncated = false;  // Not reported: zero-shot answers carry no per-candidate flag.
    absl::StatusOr<model::Sequence> sequence = EncodeSequence(pair, *limits, info, options, &truncated);
    if (!sequence.ok()) {
      return absl::Status(sequence.status().code(),
                          absl::StrCat("candidate ", i, ": ", sequence.status().message()));
    }
    out.pairs.push_back(*std::move(sequence));
  }
  return out;
}

std::vector<float> ZeroShotScores(const std::vector<std::vector<float>>& logits, int entailment,
                                  int contradiction, bool multi_label) {
  std::vector<float> scores(logits.size());
  if (multi_label) {
    // Per candidate: softmax over (entailment, contradiction).
    for (size_t i = 0; i < logits.size(); ++i) {
      const double e = logits[i][entailment], c = logits[i][contradiction];
      scores[i] = static_cast<float>(1.0 / (1.0 + std::exp(c - e)));
    }
    return scores;
  }
  // Softmax over the candidates of their entailment logits.
  double top = -std::numeric_limits<double>::infinity();
  for (const auto& l : logits) top = std::max<double>(top, l[entailment]);
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) sum += std::exp(logits[i][entailment] - top);
  for (size_t i = 0; i < logits.size(); ++i) {
    scores[i] = static_cast<float>(std::exp(logits[i][entailment] - top) / sum);
  }
  return scores;
}

void WriteZeroShotLabels(const pb::ZeroShotClassifyRequest& request, const std::vector<float>& scores,
                         const std::vector<std::vector<float>>& logits, int entailment,
                         pb::ZeroShotClassifyResponse* out) {
  for (int i : OrderByScore(scores)) {
    pb::ZeroShotLabel* label = out->add_labels();
    label->set_label(request.candidate_labels(i));
    label->set_score(scores[i]);
    label->set_entailment_logit(logits[i][entailment]);
  }
}

absl::StatusOr<TaskWork> StartZeroShot(const TaskEnv& env, const pb::ZeroShotClassifyRequest& request,
                                       pb::ZeroShotClassifyResponse* response) {
  response->set_request_id(request.request_id());
  absl::StatusOr<ZeroShotInputs> built = BuildZeroShotInputs(request, env.info, env.requests);
  if (!built.ok()) return built.status();
  // Each candidate's logits land in its slot; the scores need them all.
  auto logits = std::make_shared<std::vector<std::vector<float>>>(built->pairs.size());
  TaskWork work;
  for (size_t i = 0; i < built->pairs.size(); ++i) {
    work.tasks.push_back(std::make_unique<ClassifyTask>(
        std::move(built->pairs[i]),
        [logits, i](model::ClassifyOutput output) { (*logits)[i] = std::move(output.logits); }));
  }
  work.complete = [&request, response, logits, entailment = built->entailment,
                   contradiction = built->contradiction]() {
    const std::vector<float> scores = ZeroShotScores(*logits, entailment, contradiction, request.multi_label());
    WriteZeroShotLabels(request, scores, *logits, entailment, response);
    return absl::OkStatus();
  };
  return work;
}

}  // namespace deberta::service
