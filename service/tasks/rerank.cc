// The Rerank task: checks, one task per document window, scores and order.
#include "service/tasks/rerank.h"

#include <cmath>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "service/engine_task.h"

namespace deberta::service {

namespace pb = serving::v1;

absl::StatusOr<RerankInputs> BuildRerankInputs(const pb::RerankRequest& request, const model::ModelInfo& info,
                                               const RequestOptions& options) {
  if (!info.has_classifier) {
    return absl::FailedPreconditionError("the served model has no sequence-classification head");
  }
  if (info.labels.size() != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the served model is not a reranker: a reranker is a sequence classifier with one label; this one has ",
        info.labels.size(), " (", absl::StrJoin(info.labels, ", "), ")"));
  }
  if (options.tokenizer == nullptr) {
    return absl::FailedPreconditionError("reranking needs the checkpoint's tokenizer files");
  }
  if (request.query().empty()) return absl::InvalidArgumentError("query is empty");
  const int n = request.documents_size();
  if (n == 0) return absl::InvalidArgumentError("no documents");
  if (n > options.max_rerank_documents) {
    return absl::InvalidArgumentError(absl::StrCat("request has ", n, " documents; the maximum is ",
                                                   options.max_rerank_documents, " (--max_rerank_documents)"));
  }
  if (request.top_n() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("top_n is ", request.top_n(), "; it must be >= 0 (0: all)"));
  }
  RerankInputs out;
  out.top_n = request.top_n() == 0 ? n : std::min(request.top_n(), n);
  absl::StatusOr<WindowAggregate> aggregate = WindowAggregateOf(request.long_input());
  if (!aggregate.ok()) return aggregate.status();
  out.aggregate = *aggregate;
  absl::StatusOr<int64_t> window_limit = WindowLimit(request.long_input(), options);
  if (!window_limit.ok()) return window_limit.status();
  absl::StatusOr<TextLimits> limits =
      ResolveTextLimits(request.truncation(), request.max_length(), info, options);
  if (!limits.ok()) return limits.status();
  int64_t tokens = 0;
  pb::Sequence pair;
  pair.set_text(request.query());
  for (int i = 0; i < n; ++i) {
    if (request.documents(i).empty()) return absl::InvalidArgumentError(absl::StrCat("document ", i, " is empty"));
    pair.set_text_pair(request.documents(i));
    absl::StatusOr<InputWindows> windows =
        EncodeInWindows(pair, request.long_input(), *window_limit, WindowedText::kSecond, *limits, info, options);
    if (!windows.ok()) {
      return absl::Status(windows.status().code(), absl::StrCat("document ", i, ": ", windows.status().message()));
    }
    tokens += TotalTokens(windows->sequences);
    out.documents.push_back(*std::move(windows));
  }
  if (absl::Status s = CheckRequestTokens(tokens, options); !s.ok()) return s;
  return out;
}

float DocumentScore(const std::vector<float>& window_logits, bool raw_scores, WindowAggregate aggregate) {
  std::vector<std::vector<float>> per_window;
  per_window.reserve(window_logits.size());
  for (float logit : window_logits) {
    per_window.push_back({raw_scores ? logit : static_cast<float>(1.0 / (1.0 + std::exp(-double{logit})))});
  }
  return AggregateWindowScores(per_window, aggregate).front();
}

void WriteRerankResults(const pb::RerankRequest& request, const RerankInputs& inputs,
                        const std::vector<float>& scores, pb::RerankResponse* response) {
  const std::vector<int> order = OrderByScore(scores);
  for (int k = 0; k < inputs.top_n; ++k) {
    const int i = order[k];
    pb::RerankResult* result = response->add_results();
    result->set_index(i);
    result->set_score(scores[i]);
    if (request.return_documents()) result->set_document(request.documents(i));
    result->set_num_windows(static_cast<int32_t>(inputs.documents[i].sequences.size()));
    result->set_num_tokens(inputs.documents[i].num_tokens);
  }
}

absl::StatusOr<TaskWork> StartRerank(const TaskEnv& env, const pb::RerankRequest& request,
                                     pb::RerankResponse* response) {
  response->set_request_id(request.request_id());
  absl::StatusOr<RerankInputs> built = BuildRerankInputs(request, env.info, env.requests);
  if (!built.ok()) return built.status();
  // Per document, its windows' logits; the order needs them all.
  struct State {
    RerankInputs inputs;
    std::vector<std::vector<float>> logits;
  };
  auto state = std::make_shared<State>();
  state->inputs = *std::move(built);
  TaskWork work;
  for (size_t d = 0; d < state->inputs.documents.size(); ++d) {
    std::vector<model::Sequence>& windows = state->inputs.documents[d].sequences;
    state->logits.emplace_back(windows.size());
    for (size_t w = 0; w < windows.size(); ++w) {
      // Moved out: only the count of windows is read afterwards.
      work.tasks.push_back(std::make_unique<ClassifyTask>(std::move(windows[w]), [state, d, w](model::ClassifyOutput output) {
        state->logits[d][w] = output.logits.empty() ? 0.0f : output.logits.front();
      }));
    }
  }
  work.complete = [&request, response, state]() {
    std::vector<float> scores;
    scores.reserve(state->logits.size());
    for (const std::vector<float>& logits : state->logits) {
      scores.push_back(DocumentScore(logits, request.raw_scores(), state->inputs.aggregate));
    }
    WriteRerankResults(request, state->inputs, scores, response);
    return absl::OkStatus();
  };
  return work;
}

}  // namespace deberta::service
