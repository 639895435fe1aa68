// Turning requests into batch tasks: pure functions of (request, model
// info, options) that check a request (sequence count, every sequence,
// top_k, mask positions), truncate when allowed, and return its tasks or
// the status to answer with. No gRPC server, batcher or engine is involved,
// so these are tested on literal requests. Each sequence is validated here,
// once; the engine relies on it.
#ifndef DEBERTA_SERVICE_REQUEST_BUILDER_H_
#define DEBERTA_SERVICE_REQUEST_BUILDER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.pb.h"
#include "model/engine.h"
#include "model/text_encoding.h"
#include "model/tokenizer.h"
#include "service/batch_task.h"

namespace deberta::service {

struct RequestOptions {
  // Most sequences in one request; more is InvalidArgument. REQUIRES: >= 1.
  int max_sequences_per_request = 64;
  // Sequences longer than the model's limit: rejected (false), or cut to
  // the first max-1 tokens plus the last one, so [SEP] stays (true). For
  // text, the default truncation: longest_first (true) or none (false).
  bool truncate = false;
  // The checkpoint's tokenizer, or null: text inputs are then
  // FailedPrecondition. Not owned; outlives every call.
  const model::Tokenizer* tokenizer = nullptr;
  // Fill-mask predicts the positions of this id when a sequence names no
  // positions; -1 when the model's mask id is unknown. (The service sets it
  // from its special tokens.)
  int32_t mask_token_id = -1;
  // Largest fill-mask top_k (candidates per predicted position). REQUIRES: >= 1.
  int max_top_k = 100;
  // Most fill-mask work in one request: predicted positions x vocabulary
  // (the LM head's logits, each a dot product over the hidden size). The
  // default, 64 Mi, is 512 positions of deberta-v3's 128k vocabulary.
  // REQUIRES: >= 1.
  int64_t max_fill_mask_logits = int64_t{1} << 26;
  // Most candidates in one fill-mask answer (predicted positions x top_k),
  // which bounds the response: about 10 bytes each. REQUIRES: >= 1.
  int64_t max_fill_mask_candidates = 100000;
};

// Classify tasks, plus how many labels each answer lists.
struct ClassifyTasks {
  std::vector<std::unique_ptr<BatchTask>> tasks;  // One per sequence, in order.
  int top_k = 0;  // Labels listed per result: the request's top_k, or all.
};

// FailedPrecondition if the model has no classifier (or a sequence is text
// and there is no tokenizer); InvalidArgument naming the sequence and the
// problem for bad input. Text sequences are tokenized here. Tasks have endpoint and
// input set; deadline, cancellation and `done` are the caller's.
absl::StatusOr<ClassifyTasks> BuildClassifyTasks(const serving::v1::ClassifyRequest& request,
                                                 const model::ModelInfo& info,
                                                 const RequestOptions& options);

// FailedPrecondition if the model has no MLM head; InvalidArgument for bad
// input, and for a request over max_fill_mask_logits or
// max_fill_mask_candidates (naming the limit: it is not retryable as it is).
// Positions are the request's, or else every mask token, sorted; for text,
// the places of "[MASK]" in it (and positions must be empty).
absl::StatusOr<std::vector<std::unique_ptr<BatchTask>>> BuildFillMaskTasks(
    const serving::v1::FillMaskRequest& request, const model::ModelInfo& info,
    const RequestOptions& options);

// Zero-shot classification: one classify task per candidate label, the
// pair (text, hypothesis), and where the NLI labels are.
struct ZeroShotTasks {
  std::vector<std::unique_ptr<BatchTask>> tasks;  // One per candidate, in order.
  int entailment = -1;     // Label ids in the classifier's output.
  int contradiction = -1;
};

// FailedPrecondition without a tokenizer, a classifier, or labels starting
// with "entail" and "contra" (case-insensitive) in id2label;
// InvalidArgument for no text, no candidates or too many, or a template
// without "{}".
absl::StatusOr<ZeroShotTasks> BuildZeroShotTasks(const serving::v1::ZeroShotClassifyRequest& request,
                                                 const model::ModelInfo& info, const RequestOptions& options);

// Scores of the candidates from their classifier logits (one vector per
// candidate), as Hugging Face's zero-shot pipeline computes them.
std::vector<float> ZeroShotScores(const std::vector<std::vector<float>>& logits, int entailment,
                                  int contradiction, bool multi_label);

// The tokenization a request asks for: its truncation (the default from
// `options`), and max_length (0: the model's maximum). InvalidArgument for
// a max_length over the model's maximum or below what special tokens need.
struct TextLimits {
  model::Truncation truncation = model::Truncation::kNone;
  int64_t max_length = 0;
};
absl::StatusOr<TextLimits> ResolveTextLimits(serving::v1::Truncation truncation, int64_t max_length,
                                             const model::ModelInfo& info, const RequestOptions& options);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_REQUEST_BUILDER_H_
