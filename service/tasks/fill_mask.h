// The FillMask task: masked-token prediction at the mask tokens (or given
// positions) of token ids, or at "[MASK]" in text, each sequence one
// FillMaskTask; top_k candidates per position, with their pieces and, for
// text, the text with each candidate in place.
#ifndef DEBERTA_SERVICE_TASKS_FILL_MASK_H_
#define DEBERTA_SERVICE_TASKS_FILL_MASK_H_

#include <vector>

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.pb.h"
#include "model/engine.h"
#include "model/tokenizer.h"
#include "service/request_builder.h"
#include "service/tasks/task.h"

namespace deberta::service {

// One checked sequence with its positions and top_k, and whether it was
// text (the answer then carries text too).
struct FillMaskInput {
  model::MaskedSequence input;
  bool from_text = false;
};

// FailedPrecondition if the model has no MLM head; InvalidArgument for bad
// input, and for a request over max_fill_mask_logits or
// max_fill_mask_candidates (naming the limit: it is not retryable as it is).
// Positions are the request's, or else every mask token, sorted; for text,
// the places of "[MASK]" in it (and positions must be empty).
absl::StatusOr<std::vector<FillMaskInput>> BuildFillMaskInputs(const serving::v1::FillMaskRequest& request,
                                                               const model::ModelInfo& info,
                                                               const RequestOptions& options);

// One prediction per predicted position, candidates highest first. With a
// tokenizer, each candidate also carries its piece; with `text_input_ids`
// (the input, when it was built from text) also the text with the
// candidate in place of its mask.
void WriteFillMaskResult(const model::FillMaskOutput& output, const model::Tokenizer* tokenizer,
                         const std::vector<int32_t>* text_input_ids, serving::v1::FillMaskResult* out);

absl::StatusOr<TaskWork> StartFillMask(const TaskEnv& env, const serving::v1::FillMaskRequest& request,
                                       serving::v1::FillMaskResponse* response);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_FILL_MASK_H_
