// The FillMask task: checks, tasks, and the answer.
#include "service/tasks/fill_mask.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "model/text_encoding.h"
#include "service/engine_task.h"

namespace deberta::service {

namespace pb = serving::v1;

absl::StatusOr<std::vector<FillMaskInput>> BuildFillMaskInputs(const pb::FillMaskRequest& request,
                                                               const model::ModelInfo& info,
                                                               const RequestOptions& options) {
  if (!info.has_mlm_head) {
    return absl::FailedPreconditionError("the served model has no masked-LM head");
  }
  const int n = request.sequences_size();
  if (absl::Status s = CheckSequenceCount(n, options); !s.ok()) return s;
  const int top_k = request.top_k() == 0 ? 5 : request.top_k();
  const int64_t max_top_k = std::min<int64_t>(options.max_top_k, info.vocab_size);
  if (top_k < 1 || top_k > max_top_k) {
    return absl::InvalidArgumentError(absl::StrCat(
        "top_k is ", request.top_k(), "; it must be in [1, ", max_top_k, "]",
        max_top_k < info.vocab_size ? " (the server's --max_top_k)" : " (the vocabulary size)"));
  }
  int64_t predicted = 0;  // Positions over the whole request.
  std::vector<FillMaskInput> inputs;
  inputs.reserve(n);
  for (int i = 0; i < n; ++i) {
    const pb::FillMaskSequence& in = request.sequences(i);
    FillMaskInput built;
    model::MaskedSequence& masked = built.input;
    masked.top_k = top_k;
    std::vector<int32_t>& positions = masked.positions;
    if (IsText(in.sequence())) {
      // "[MASK]" written in the text marks the positions.
      if (absl::Status s = CheckTextInput(in.sequence(), options); !s.ok()) return ForSequence(i, s);
      if (in.sequence().has_text_pair() || in.positions_size() > 0) {
        return ForSequence(i, absl::InvalidArgumentError(
                                  "fill-mask text takes no text_pair and no positions: write [MASK] in the text"));
      }
      absl::StatusOr<std::vector<int32_t>> ids =
          model::EncodeMaskedText(*options.tokenizer, in.sequence().text(), &positions);
      if (!ids.ok()) return ForSequence(i, ids.status());
      if (positions.empty()) {
        return ForSequence(i, absl::InvalidArgumentError("the text has no [MASK] to fill"));
      }
      masked.sequence.token_ids = *std::move(ids);
      built.from_text = true;
      if (absl::Status s = model::ValidateSequence(info, masked.sequence); !s.ok()) return ForSequence(i, s);
    } else {
      absl::StatusOr<model::Sequence> sequence = PrepareSequence(in.sequence(), info, options);
      if (!sequence.ok()) return ForSequence(i, sequence.status());
      masked.sequence = *std::move(sequence);
      if (in.positions_size() > 0) {
        positions.assign(in.positions().begin(), in.positions().end());
      } else {
        const std::vector<int32_t>& ids = masked.sequence.token_ids;
        for (size_t t = 0; t < ids.size(); ++t) {
          if (ids[t] == options.mask_token_id) positions.push_back(static_cast<int32_t>(t));
        }
        if (positions.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "sequence ", i, ": no mask token (id ", options.mask_token_id, ") and no positions given"));
        }
      }
    }
    std::sort(positions.begin(), positions.end());
    if (absl::Status s = model::ValidateMaskedSequence(info, masked); !s.ok()) {
      return ForSequence(i, s);
    }
    predicted += static_cast<int64_t>(masked.positions.size());
    inputs.push_back(std::move(built));
  }
  // The request's cost, bounded before anything is queued.
  if (predicted * info.vocab_size > options.max_fill_mask_logits) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request predicts ", predicted, " positions x ", info.vocab_size, " vocabulary = ",
        predicted * info.vocab_size, " logits; the limit is ", options.max_fill_mask_logits,
        " (--max_fill_mask_logits): send fewer masks per request"));
  }
  if (predicted * top_k > options.max_fill_mask_candidates) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request asks for ", predicted, " positions x top_k ", top_k, " = ", predicted * top_k,
        " candidates; the limit is ", options.max_fill_mask_candidates,
        " (--max_fill_mask_candidates): lower top_k or send fewer masks per request"));
  }
  return inputs;
}

void WriteFillMaskResult(const model::FillMaskOutput& output, const model::Tokenizer* tokenizer,
                         const std::vector<int32_t>* text_input_ids, pb::FillMaskResult* out) {
  std::vector<int32_t> filled;
  if (text_input_ids != nullptr) filled = *text_input_ids;
  for (const model::MaskPrediction& p : output.predictions) {
    pb::MaskPrediction* prediction = out->add_predictions();
    prediction->set_position(p.position);
    for (const model::TokenScore& c : p.candidates) {
      pb::TokenCandidate* candidate = prediction->add_candidates();
      candidate->set_token_id(c.token_id);
      candidate->set_probability(c.probability);
      if (tokenizer == nullptr) continue;
      candidate->set_token(tokenizer->Piece(c.token_id));
      if (text_input_ids != nullptr && p.position >= 0 && p.position < static_cast<int32_t>(filled.size())) {
        const int32_t mask = filled[p.position];
        filled[p.position] = c.token_id;
        // Decode drops the other masks and the special tokens.
        if (auto text = tokenizer->Decode(filled); text.ok()) candidate->set_sequence(*text);
        filled[p.position] = mask;
      }
    }
  }
}

absl::StatusOr<TaskWork> StartFillMask(const TaskEnv& env, const pb::FillMaskRequest& request,
                                       pb::FillMaskResponse* response) {
  response->set_request_id(request.request_id());
  absl::StatusOr<std::vector<FillMaskInput>> built = BuildFillMaskInputs(request, env.info, env.requests);
  if (!built.ok()) return built.status();
  TaskWork work;
  for (FillMaskInput& input : *built) {
    pb::FillMaskResult* slot = response->add_results();
    slot->set_num_tokens(static_cast<int32_t>(input.input.sequence.token_ids.size()));
    std::optional<std::vector<int32_t>> text_ids;
    if (input.from_text) text_ids = input.input.sequence.token_ids;
    work.tasks.push_back(std::make_unique<FillMaskTask>(
        std::move(input.input), [slot, tokenizer = env.requests.tokenizer,
                                 text_ids = std::move(text_ids)](model::FillMaskOutput output) {
          WriteFillMaskResult(output, tokenizer, text_ids ? &*text_ids : nullptr, slot);
        }));
  }
  return work;
}

}  // namespace deberta::service
