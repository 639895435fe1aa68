// The Rerank task (docs/tasks.md 2): a one-label sequence classifier as a
// cross-encoder. Each document becomes [CLS] query [SEP] document [SEP]
// (or its windows, the query repeated in each: docs/tasks.md 3), one
// ClassifyTask per sequence in the classify queue, so a request with many
// documents is one call and as many batches as they fill; once all are
// back, the documents are ordered by sigmoid(logit) (or the logit).
#ifndef DEBERTA_SERVICE_TASKS_RERANK_H_
#define DEBERTA_SERVICE_TASKS_RERANK_H_

#include <vector>

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.pb.h"
#include "model/engine.h"
#include "service/request_builder.h"
#include "service/tasks/input_windows.h"
#include "service/tasks/long_input.h"
#include "service/tasks/task.h"

namespace deberta::service {

// A checked request: each document's sequences, and how to answer.
struct RerankInputs {
  std::vector<InputWindows> documents;
  WindowAggregate aggregate = WindowAggregate::kMax;
  int top_n = 0;  // Results to return: the request's top_n, at most all.
};

// FailedPrecondition for a model that is not a reranker (naming its labels)
// or without a tokenizer; InvalidArgument for no query, no documents or more
// than options.max_rerank_documents, a negative top_n, a document too long
// (naming it) without windows or truncation, or windows that cannot be made.
absl::StatusOr<RerankInputs> BuildRerankInputs(const serving::v1::RerankRequest& request,
                                               const model::ModelInfo& info, const RequestOptions& options);

// A document's score from its windows' logits (one each): per window
// sigmoid(logit), or the logit with `raw_scores`, then aggregated.
float DocumentScore(const std::vector<float>& window_logits, bool raw_scores, WindowAggregate aggregate);

// The results: documents by score, highest first (ties: lower index
// first), the first `top_n`.
void WriteRerankResults(const serving::v1::RerankRequest& request, const RerankInputs& inputs,
                        const std::vector<float>& scores, serving::v1::RerankResponse* response);

absl::StatusOr<TaskWork> StartRerank(const TaskEnv& env, const serving::v1::RerankRequest& request,
                                     serving::v1::RerankResponse* response);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_RERANK_H_
