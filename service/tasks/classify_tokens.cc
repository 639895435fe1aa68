// The ClassifyTokens task: checks, windows, engine tasks, entities.
#include "service/tasks/classify_tokens.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "model/token_spans.h"
#include "service/engine_task.h"
#include "service/tasks/input_windows.h"

namespace deberta::service {

namespace pb = serving::v1;

namespace {

absl::StatusOr<EntityAggregation> AggregationOf(pb::Aggregation aggregation) {
  switch (aggregation) {
    case pb::AGGREGATION_UNSPECIFIED:
    case pb::AGGREGATION_SIMPLE: return EntityAggregation::kSimple;
    case pb::AGGREGATION_NONE: return EntityAggregation::kNone;
    case pb::AGGREGATION_FIRST: return EntityAggregation::kFirst;
    case pb::AGGREGATION_AVERAGE: return EntityAggregation::kAverage;
    case pb::AGGREGATION_MAX: return EntityAggregation::kMax;
    default: return absl::InvalidArgumentError(absl::StrCat("unknown aggregation ", aggregation));
  }
}

// [CLS] ids[window] [SEP].
model::Sequence WindowSequence(const std::vector<int32_t>& ids, const TokenWindow& window,
                               const model::SpecialTokens& special) {
  model::Sequence sequence;
  sequence.token_ids.reserve(window.end - window.start + 2);
  sequence.token_ids.push_back(special.cls);
  sequence.token_ids.insert(sequence.token_ids.end(), ids.begin() + window.start, ids.begin() + window.end);
  sequence.token_ids.push_back(special.sep);
  return sequence;
}

// A text: its tokens and spans, and the windows (or the one, possibly
// truncated, sequence) that run it.
absl::StatusOr<TokenClassifyInput> TextInput(const pb::Sequence& in, const pb::ClassifyTokensRequest& request,
                                             const TextLimits& limits, int64_t window_limit,
                                             const model::ModelInfo& info, const model::SpecialTokens& special,
                                             const RequestOptions& options) {
  if (absl::Status s = CheckTextInput(in, options); !s.ok()) return s;
  if (in.has_text_pair()) return absl::InvalidArgumentError("token classification takes one text, not a pair");
  TokenClassifyInput input;
  input.text = in.text();
  absl::StatusOr<std::vector<model::Token>> tokens = options.tokenizer->Tokenize(input.text);
  if (!tokens.ok()) return tokens.status();
  const std::vector<model::TokenSpan> spans = model::TokenSpans(input.text, *tokens, options.tokenizer->kind());
  std::vector<int32_t> ids;
  ids.reserve(tokens->size());
  for (size_t t = 0; t < tokens->size(); ++t) {
    ids.push_back((*tokens)[t].id);
    input.tokens.push_back(
        {static_cast<int32_t>(t + 1), spans[t].start, spans[t].end, spans[t].space, spans[t].word_start});
  }
  const auto n = static_cast<int64_t>(ids.size());
  input.num_tokens = static_cast<int32_t>(n + 2);
  const int64_t capacity = limits.max_length - 2;
  if (WantsWindows(request.long_input())) {
    absl::StatusOr<std::vector<TokenWindow>> windows =
        PlanWindows(n, capacity, request.long_input().stride(), window_limit);
    if (!windows.ok()) return windows.status();
    input.windows = *std::move(windows);
  } else if (n <= capacity) {
    input.windows = {{0, static_cast<int32_t>(n)}};
  } else if (limits.truncation == model::Truncation::kNone) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the text is ", n + 2, " tokens with [CLS] and [SEP]; the limit is ", limits.max_length,
        " (ask for long_input windows, or run the server with --truncate)"));
  } else {
    input.windows = {{0, static_cast<int32_t>(capacity)}};  // Truncated: the tokens past it get no entity.
    input.tokens.resize(static_cast<size_t>(capacity));
  }
  for (const TokenWindow& window : input.windows) {
    model::Sequence sequence = WindowSequence(ids, window, special);
    if (absl::Status s = model::ValidateSequence(info, sequence); !s.ok()) return s;
    input.sequences.push_back(std::move(sequence));
  }
  return input;
}

// Token ids: one sequence as sent (truncated as the server allows); every
// position but the special tokens is a content token, without a span.
absl::StatusOr<TokenClassifyInput> IdsInput(const pb::Sequence& in, const pb::ClassifyTokensRequest& request,
                                            EntityAggregation aggregation, const model::ModelInfo& info,
                                            const model::SpecialTokens& special, const RequestOptions& options) {
  if (aggregation != EntityAggregation::kNone && aggregation != EntityAggregation::kSimple) {
    return absl::InvalidArgumentError(
        "word-level aggregation (FIRST, AVERAGE, MAX) needs text: token ids take AGGREGATION_NONE or "
        "AGGREGATION_SIMPLE");
  }
  if (WantsWindows(request.long_input())) {
    return absl::InvalidArgumentError("long_input windows need text; token ids run as one sequence");
  }
  absl::StatusOr<model::Sequence> sequence = PrepareSequence(in, info, options);
  if (!sequence.ok()) return sequence.status();
  TokenClassifyInput input;
  input.from_token_ids = true;
  input.num_tokens = static_cast<int32_t>(in.token_ids_size());
  const std::vector<int32_t>& ids = sequence->token_ids;
  for (size_t p = 0; p < ids.size(); ++p) {
    if (ids[p] == special.cls || ids[p] == special.sep || ids[p] == special.pad) continue;
    input.tokens.push_back({static_cast<int32_t>(p), -1, -1, false, true});
  }
  input.windows = {{0, static_cast<int32_t>(input.tokens.size())}};
  input.sequences.push_back(*std::move(sequence));
  return input;
}

// softmax over one position's logits, in float32.
std::vector<float> Softmax(const float* logits, int32_t labels) {
  const float top = *std::max_element(logits, logits + labels);
  std::vector<float> p(static_cast<size_t>(labels));
  float sum = 0;
  for (int32_t l = 0; l < labels; ++l) sum += p[l] = std::exp(logits[l] - top);
  for (float& v : p) v /= sum;
  return p;
}

}  // namespace

absl::StatusOr<TokenClassifyInputs> BuildClassifyTokensInputs(const pb::ClassifyTokensRequest& request,
                                                              const model::ModelInfo& info,
                                                              const model::SpecialTokens& special_tokens,
                                                              const RequestOptions& options) {
  if (!info.has_token_classifier) {
    return absl::FailedPreconditionError("the served model has no token-classification head");
  }
  const int n = request.sequences_size();
  if (absl::Status s = CheckSequenceCount(n, options); !s.ok()) return s;
  TokenClassifyInputs out;
  absl::StatusOr<EntityAggregation> aggregation = AggregationOf(request.aggregation());
  if (!aggregation.ok()) return aggregation.status();
  out.aggregation = *aggregation;
  if (!request.keep_all_labels()) {
    out.ignore_labels.assign(request.ignore_labels().begin(), request.ignore_labels().end());
    if (out.ignore_labels.empty()) out.ignore_labels = {"O"};
  }
  out.windowed = WantsWindows(request.long_input());
  absl::StatusOr<int64_t> window_limit = WindowLimit(request.long_input(), options);
  if (!window_limit.ok()) return window_limit.status();
  std::optional<TextLimits> limits;  // Resolved at the first text sequence.
  int64_t tokens = 0;
  for (int i = 0; i < n; ++i) {
    const pb::Sequence& in = request.sequences(i);
    absl::StatusOr<TokenClassifyInput> input;
    if (IsText(in)) {
      if (!limits) {
        absl::StatusOr<TextLimits> resolved =
            ResolveTextLimits(pb::TRUNCATION_UNSPECIFIED, request.max_length(), info, options);
        if (!resolved.ok()) return resolved.status();
        limits = *resolved;
      }
      input = TextInput(in, request, *limits, *window_limit, info, special_tokens, options);
    } else {
      input = IdsInput(in, request, out.aggregation, info, special_tokens, options);
    }
    if (!input.ok()) return ForSequence(i, input.status());
    tokens += TotalTokens(input->sequences);
    out.inputs.push_back(*std::move(input));
  }
  if (absl::Status s = CheckRequestTokens(tokens, options); !s.ok()) return s;
  return out;
}

std::vector<TokenEntity> InputEntities(const TokenClassifyInput& input,
                                       const std::vector<model::TokenClassifyOutput>& outputs,
                                       const TokenClassifyInputs& how, const std::vector<std::string>& labels) {
  const bool ids = input.from_token_ids;
  // Each token from the window it lies deepest in (docs/tasks.md 3).
  const std::vector<int32_t> window = TokenWindowChoice(input.windows, static_cast<int64_t>(input.tokens.size()));
  std::vector<std::vector<float>> probabilities;
  probabilities.reserve(input.tokens.size());
  for (size_t t = 0; t < input.tokens.size(); ++t) {
    const int32_t w = ids ? 0 : window[t];
    const model::TokenClassifyOutput& output = outputs[static_cast<size_t>(w)];
    const int64_t position = ids ? input.tokens[t].index : static_cast<int64_t>(t) - input.windows[w].start + 1;
    probabilities.push_back(Softmax(output.logits.data() + position * output.num_labels, output.num_labels));
  }
  return AggregateEntities(input.tokens, probabilities, labels, how.aggregation, how.ignore_labels);
}

absl::StatusOr<TaskWork> StartClassifyTokens(const TaskEnv& env, const pb::ClassifyTokensRequest& request,
                                             pb::ClassifyTokensResponse* response) {
  response->set_request_id(request.request_id());
  absl::StatusOr<TokenClassifyInputs> built =
      BuildClassifyTokensInputs(request, env.info, env.special_tokens, env.requests);
  if (!built.ok()) return built.status();
  // The inputs and every sequence's output, until the answer is written.
  struct State {
    TokenClassifyInputs how;
    std::vector<std::vector<model::TokenClassifyOutput>> outputs;  // Per input, per sequence.
  };
  auto state = std::make_shared<State>();
  state->how = *std::move(built);
  TaskWork work;
  for (size_t i = 0; i < state->how.inputs.size(); ++i) {
    TokenClassifyInput& input = state->how.inputs[i];
    state->outputs.emplace_back(input.sequences.size());
    for (size_t w = 0; w < input.sequences.size(); ++w) {
      work.tasks.push_back(std::make_unique<ClassifyTokensTask>(
          input.sequences[w], [state, i, w](model::TokenClassifyOutput output) {
            state->outputs[i][w] = std::move(output);
          }));
    }
  }
  const std::vector<std::string>* labels = &env.info.labels;
  work.complete = [state, labels, response]() {
    for (size_t i = 0; i < state->how.inputs.size(); ++i) {
      const TokenClassifyInput& input = state->how.inputs[i];
      pb::TokenClassification* result = response->add_results();
      result->set_num_tokens(input.num_tokens);
      result->set_num_windows(static_cast<int32_t>(input.sequences.size()));
      for (const TokenEntity& entity : InputEntities(input, state->outputs[i], state->how, *labels)) {
        pb::Entity* out = result->add_entities();
        out->set_label(entity.label);
        out->set_score(entity.score);
        out->set_start(entity.start);
        out->set_end(entity.end);
        out->set_word(CodePointSubstring(input.text, entity.start, entity.end));
        out->set_index(entity.index);
      }
    }
    return absl::OkStatus();
  };
  return work;
}

}  // namespace deberta::service
