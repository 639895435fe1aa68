// Request sequences into model inputs, with the checks every task shares:
// pure functions of (request, model info, options) that check a sequence
// count, tokenize text or copy token ids (truncating when allowed), and
// validate each sequence, returning it or the status to answer with. The
// task files (service/tasks/) build their work from these. Each sequence is
// validated here, once; the engine relies on it.
#ifndef DEBERTA_SERVICE_REQUEST_BUILDER_H_
#define DEBERTA_SERVICE_REQUEST_BUILDER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.pb.h"
#include "model/engine.h"
#include "model/text_encoding.h"
#include "model/tokenizer.h"

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
  // Most windows one text of a long_input MODE_WINDOWS request may take
  // (docs/tasks.md 3); a request may lower it. REQUIRES: >= 1.
  int max_windows = 16;
  // Most tokens one request may queue, every window and document counted
  // (special tokens included). The default, 128 Ki, is 256 sequences of
  // 512 tokens: no plain request of 64 sequences reaches it. REQUIRES: >= 1.
  int64_t max_tokens_per_request = int64_t{1} << 17;
  // Most documents in one Rerank request. REQUIRES: >= 1.
  int max_rerank_documents = 256;
};

// "request has no sequences", or more than max_sequences_per_request.
absl::Status CheckSequenceCount(int count, const RequestOptions& options);
// "sequence i: <message>", keeping the code.
absl::Status ForSequence(int index, const absl::Status& status);
// Whether a request sequence is text (else token ids).
bool IsText(const serving::v1::Sequence& in);
// FailedPrecondition without a tokenizer; InvalidArgument for text with ids.
absl::Status CheckTextInput(const serving::v1::Sequence& in, const RequestOptions& options);

// The tokenization a request asks for: its truncation (the default from
// `options`), and max_length (0: the model's maximum). InvalidArgument for
// a max_length over the model's maximum or below what special tokens need.
struct TextLimits {
  model::Truncation truncation = model::Truncation::kNone;
  int64_t max_length = 0;
};
absl::StatusOr<TextLimits> ResolveTextLimits(serving::v1::Truncation truncation, int64_t max_length,
                                             const model::ModelInfo& info, const RequestOptions& options);

// Tokenizes a text sequence (and its pair) within `limits` and validates
// it; `truncated` says whether the text was cut to fit.
absl::StatusOr<model::Sequence> EncodeSequence(const serving::v1::Sequence& in, const TextLimits& limits,
                                               const model::ModelInfo& info, const RequestOptions& options,
                                               bool* truncated);
// Copies a token-id sequence, truncating it when options.truncate allows
// (the last token, [SEP], stays), and validates it.
absl::StatusOr<model::Sequence> PrepareSequence(const serving::v1::Sequence& in, const model::ModelInfo& info,
                                                const RequestOptions& options);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_REQUEST_BUILDER_H_
