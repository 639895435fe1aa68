// The ClassifyTokens task (docs/tasks.md 1 and 3): each text tokenized with
// its spans (model/token_spans.h), run whole, truncated or in windows
// (long_input.h) as ClassifyTokensTasks, and answered as entities
// (token_entities.h) once every window is back; token-id input answers
// per token or grouped, without spans.
#ifndef DEBERTA_SERVICE_TASKS_CLASSIFY_TOKENS_H_
#define DEBERTA_SERVICE_TASKS_CLASSIFY_TOKENS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.pb.h"
#include "model/engine.h"
#include "service/request_builder.h"
#include "service/tasks/long_input.h"
#include "service/tasks/task.h"
#include "service/tasks/token_entities.h"

namespace deberta::service {

// One request sequence, checked and split into what the engine runs.
struct TokenClassifyInput {
  bool from_token_ids = false;      // Token ids were sent: no text, no spans.
  std::string text;                 // Empty for token-id input.
  std::vector<TextToken> tokens;    // Its content tokens, in order.
  // The engine's sequences ([CLS] window [SEP], or the whole sequence) and
  // the content tokens each holds: token t of `tokens` is at position
  // t - windows[w].start + 1 of sequence w (token ids: `tokens[t].index`).
  std::vector<model::Sequence> sequences;
  std::vector<TokenWindow> windows;
  int32_t num_tokens = 0;  // The whole input as one sequence.
};

// A checked request: its inputs in order, and how to answer them.
struct TokenClassifyInputs {
  std::vector<TokenClassifyInput> inputs;
  EntityAggregation aggregation = EntityAggregation::kSimple;
  std::vector<std::string> ignore_labels;
  bool windowed = false;
};

// FailedPrecondition if the model has no token-classification head (or a
// sequence is text and there is no tokenizer); InvalidArgument naming the
// sequence and the problem for bad input (a word-level aggregation or
// windows on token ids, a text pair, too long a text without windows or
// truncation, a bad stride, more windows than allowed).
absl::StatusOr<TokenClassifyInputs> BuildClassifyTokensInputs(const serving::v1::ClassifyTokensRequest& request,
                                                              const model::ModelInfo& info,
                                                              const model::SpecialTokens& special_tokens,
                                                              const RequestOptions& options);

// The entities of one input from its sequences' outputs (one per sequence).
std::vector<TokenEntity> InputEntities(const TokenClassifyInput& input,
                                       const std::vector<model::TokenClassifyOutput>& outputs,
                                       const TokenClassifyInputs& how, const std::vector<std::string>& labels);

absl::StatusOr<TaskWork> StartClassifyTokens(const TaskEnv& env, const serving::v1::ClassifyTokensRequest& request,
                                             serving::v1::ClassifyTokensResponse* response);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TASKS_CLASSIFY_TOKENS_H_
