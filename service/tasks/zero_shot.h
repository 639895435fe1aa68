// The ZeroShotClassify task: Hugging Face's zero-shot pipeline on an NLI
// classifier. Each candidate label becomes the pair (text, hypothesis), one
// ClassifyTask in the classify queue; once all are done, the candidates'
// scores come from their entailment (and contradiction) logits. A long
// text may run in windows (docs/tasks.md 3): every candidate's pair for each
// window of the text, the candidates' scores per window, then aggregated.
#ifndef DEBERTA_SERVICE_TASKS_ZERO_SHOT_H_
#define DEBERTA_SERVICE_TASKS_ZERO_SHOT_H_

#include <vector>

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.pb.h"
#include "model/engine.h"
#include "service/request_builder.h"
#include "service/tasks/long_input.h"
#include "service/tasks/task.h"

namespace deberta::service {

// The pairs, per window of the text (one without windows) one per
// candidate in order; where the NLI labels are; how windows combine.
struct ZeroShotInputs {
  std::vector<std::vector<model::Sequence>> windows;
  int entailment = -1;  // Label ids in the classifier's output.
  int contradiction = -1;
  WindowAggregate aggregate = WindowAggregate::kMax;
};

// FailedPrecondition without a tokenizer, a classifier, or labels starting
// with "entail" and "contra" (case-insensitive) in id2label;
// InvalidArgument for no text, no candidates or too many, a template
// without "{}", or windows that cannot be made (the premise's windows leave
// room for the longest hypothesis).
absl::StatusOr<ZeroShotInputs> BuildZeroShotInputs(const serving::v1::ZeroShotClassifyRequest& request,
                                                   const model::ModelInfo& info, const RequestOptions& options);

// Scores of the candidates from their classifier logits (one vector per
// candidate), as Hugging Face's zero-shot pipeline computes them.
std::vector<float> ZeroShotScores(const std::vector<std::vector<float>>& logits, int entailment,
                                  int contradiction, bool multi_label);

// Every candidate label with its score and entailment logit, highest score
// first (`logits`: each candidate's classifier logits, in request order,
// or empty when the scores aggregate windows: the logits are then 0).
void WriteZeroShotLabels(const serving::v1::ZeroShotClassifyRequest& request, const std::vector<float>& scores,
                         const std::vector<std::vector<float>>& logits, int entailment,
                         serving::v1::ZeroShotClassifyResponse* out);

absl::StatusOr<TaskWork> StartZeroShot(const TaskEnv& env, const serving::v1::ZeroShotClassifyRequest& request,
                                       serving::v1::ZeroShotClassifyResponse* response);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_ZERO_SHOT_H_
