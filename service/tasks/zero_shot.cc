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
#include "service/tasks/input_windows.h"

namespace deberta::service {

namespace pb = serving::v1;

namespace {

// The premise in windows that leave room for the longest hypothesis, so
// that every candidate sees the same windows: per window, each candidate's
// [CLS] window [SEP] hypothesis [SEP].
absl::StatusOr<std::vector<std::vector<model::Sequence>>> PremiseWindows(
    const std::string& text, const std::vector<std::string>& hypotheses, int64_t stride, int64_t window_limit,
    const TextLimits& limits, const model::ModelInfo& info, const RequestOptions& options) {
  absl::StatusOr<std::vector<int32_t>> premise = TokenIds(*options.tokenizer, text);
  if (!premise.ok()) return premise.status();
  std::vector<std::vector<int32_t>> hypothesis_ids;
  size_t longest = 0;
  for (const std::string& hypothesis : hypotheses) {
    absl::StatusOr<std::vector<int32_t>> ids = TokenIds(*options.tokenizer, hypothesis);
    if (!ids.ok()) return ids.status();
    longest = std::max(longest, ids->size());
    hypothesis_ids.push_back(*std::move(ids));
  }
  absl::StatusOr<std::vector<TokenWindow>> windows =
      PlanWindows(static_cast<int64_t>(premise->size()), limits.max_length - 3 - static_cast<int64_t>(longest),
                  stride, window_limit);
  if (!windows.ok()) return windows.status();
  const model::SpecialTokens& special = options.tokenizer->special_tokens();
  std::vector<std::vector<model::Sequence>> out;
  for (const TokenWindow& window : *windows) {
    const absl::Span<const int32_t> part =
        absl::MakeConstSpan(*premise).subspan(window.start, window.end - window.start);
    std::vector<model::Sequence>& pairs = out.emplace_back();
    for (const std::vector<int32_t>& hypothesis : hypothesis_ids) {
      model::Sequence sequence = JoinSequence(part, absl::MakeConstSpan(hypothesis), special);
      if (absl::Status s = model::ValidateSequence(info, sequence); !s.ok()) return s;
      pairs.push_back(std::move(sequence));
    }
  }
  return out;
}

}  // namespace

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
  absl::StatusOr<WindowAggregate> aggregate = WindowAggregateOf(request.long_input());
  if (!aggregate.ok()) return aggregate.status();
  out.aggregate = *aggregate;
  std::vector<std::string> hypotheses;
  for (int i = 0; i < n; ++i) {
    hypotheses.push_back(absl::StrCat(tmpl.substr(0, slot), request.candidate_labels(i), tmpl.substr(slot + 2)));
  }
  if (WantsWindows(request.long_input())) {
    absl::StatusOr<int64_t> window_limit = WindowLimit(request.long_input(), options);
    if (!window_limit.ok()) return window_limit.status();
    absl::StatusOr<std::vector<std::vector<model::Sequence>>> windows =
        PremiseWindows(request.text(), hypotheses, request.long_input().stride(), *window_limit, *limits, info, options);
    if (!windows.ok()) return windows.status();
    out.windows = *std::move(windows);
  } else {
    out.windows.emplace_back();
    for (int i = 0; i < n; ++i) {
      pb::Sequence pair;
      pair.set_text(request.text());
      pair.set_text_pair(hypotheses[i]);
      bool truncated = false;  // Not reported: zero-shot answers carry no per-candidate flag.
      absl::StatusOr<model::Sequence> sequence = EncodeSequence(pair, *limits, info, options, &truncated);
      if (!sequence.ok()) {
        return absl::Status(sequence.status().code(),
                            absl::StrCat("candidate ", i, ": ", sequence.status().message()));
      }
      out.windows.front().push_back(*std::move(sequence));
    }
  }
  int64_t tokens = 0;
  for (const std::vector<model::Sequence>& pairs : out.windows) tokens += TotalTokens(pairs);
  if (absl::Status s = CheckRequestTokens(tokens, options); !s.ok()) return s;
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
    if (!logits.empty()) label->set_entailment_logit(logits[i][entailment]);
  }
}

absl::StatusOr<TaskWork> StartZeroShot(const TaskEnv& env, const pb::ZeroShotClassifyRequest& request,
                                       pb::ZeroShotClassifyResponse* response) {
  response->set_request_id(request.request_id());
  absl::StatusOr<ZeroShotInputs> built = BuildZeroShotInputs(request, env.info, env.requests);
  if (!built.ok()) return built.status();
  // Each candidate's logits of each window land in their slot; the scores
  // need them all.
  const size_t windows = built->windows.size(), candidates = built->windows.front().size();
  auto logits = std::make_shared<std::vector<std::vector<std::vector<float>>>>(
      windows, std::vector<std::vector<float>>(candidates));
  TaskWork work;
  for (size_t w = 0; w < windows; ++w) {
    for (size_t i = 0; i < candidates; ++i) {
      work.tasks.push_back(std::make_unique<ClassifyTask>(
          std::move(built->windows[w][i]),
          [logits, w, i](model::ClassifyOutput output) { (*logits)[w][i] = std::move(output.logits); }));
    }
  }
  response->set_num_windows(static_cast<int32_t>(windows));
  work.complete = [&request, response, logits, entailment = built->entailment,
                   contradiction = built->contradiction, aggregate = built->aggregate]() {
    std::vector<std::vector<float>> per_window;
    for (const std::vector<std::vector<float>>& window : *logits) {
      per_window.push_back(ZeroShotScores(window, entailment, contradiction, request.multi_label()));
    }
    const bool one = logits->size() == 1;
    WriteZeroShotLabels(request, AggregateWindowScores(per_window, aggregate),
                        one ? logits->front() : std::vector<std::vector<float>>{}, entailment, response);
    return absl::OkStatus();
  };
  return work;
}

}  // namespace deberta::service
