// The Classify task: sequence classification of token ids or text, each
// sequence one ClassifyTask (a long text one per window, docs/tasks.md 3);
// every label's logit and probability, then the top_k labels.
#ifndef DEBERTA_SERVICE_TASKS_CLASSIFY_H_
#define DEBERTA_SERVICE_TASKS_CLASSIFY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.pb.h"
#include "model/engine.h"
#include "service/request_builder.h"
#include "service/tasks/long_input.h"
#include "service/tasks/task.h"

namespace deberta::service {

// One checked request sequence: what the engine runs for it (one
// sequence, or a text's windows), its whole length, and whether its text
// was cut to fit.
struct ClassifyInput {
  std::vector<model::Sequence> sequences;
  int32_t num_tokens = 0;
  bool truncated = false;
};

// A checked request: its sequences in order, how many labels each answer
// lists (the request's top_k, or all), and how windows' scores combine.
struct ClassifyInputs {
  std::vector<ClassifyInput> sequences;
  int top_k = 0;
  WindowAggregate aggregate = WindowAggregate::kMax;
};

// FailedPrecondition if the model has no classifier (or a sequence is text
// and there is no tokenizer); InvalidArgument naming the sequence and the
// problem for bad input. Text sequences are tokenized here.
absl::StatusOr<ClassifyInputs> BuildClassifyInputs(const serving::v1::ClassifyRequest& request,
                                                   const model::ModelInfo& info, const RequestOptions& options);

// Every logit and probability in label-id order, then the `top_k` most
// probable labels, highest first (ties keep label order).
void WriteClassification(const model::ClassifyOutput& output, int top_k, const std::vector<std::string>& labels,
                         serving::v1::Classification* out);

// The answer for several windows: `scores` (their aggregate) as the
// probabilities, no logits, and the `top_k` labels by score, logit 0.
void WriteWindowedClassification(const std::vector<float>& scores, int top_k, const std::vector<std::string>& labels,
                                 serving::v1::Classification* out);

absl::StatusOr<TaskWork> StartClassify(const TaskEnv& env, const serving::v1::ClassifyRequest& request,
                                       serving::v1::ClassifyResponse* response);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_CLASSIFY_H_
