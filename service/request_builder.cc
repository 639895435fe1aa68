// Request checks and task building for Classify and FillMask.
#include "service/request_builder.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace deberta::service {
namespace {

namespace pb = serving::v1;

absl::Status CheckSequenceCount(int count, const RequestOptions& options) {
  if (count == 0) return absl::InvalidArgumentError("request has no sequences");
  if (count > options.max_sequences_per_request) {
    return absl::InvalidArgumentError(absl::StrCat("request has ", count, " sequences; the maximum is ",
                                                   options.max_sequences_per_request));
  }
  return absl::OkStatus();
}

// "sequence i: <message>", keeping the code.
absl::Status ForSequence(int index, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("sequence ", index, ": ", status.message()));
}

bool IsText(const pb::Sequence& in) { return !in.text().empty() || in.has_text_pair(); }

absl::Status CheckTextInput(const pb::Sequence& in, const RequestOptions& options) {
  if (options.tokenizer == nullptr) {
    return absl::FailedPreconditionError(
        "the served checkpoint has no tokenizer files (spm.model, or vocab.json and merges.txt): send token_ids");
  }
  if (in.token_ids_size() > 0 || in.token_type_ids_size() > 0) {
    return absl::InvalidArgumentError("give token_ids or text, not both");
  }
  return absl::OkStatus();
}

// Tokenizes a text sequence (and its pair) within `limits`, and validates it.
absl::StatusOr<model::Sequence> EncodeSequence(const pb::Sequence& in, const TextLimits& limits,
                                               const model::ModelInfo& info, const RequestOptions& options,
                                               bool* truncated) {
  if (absl::Status s = CheckTextInput(in, options); !s.ok()) return s;
  std::optional<absl::string_view> pair;
  if (in.has_text_pair()) pair = in.text_pair();
  absl::StatusOr<model::EncodedText> encoded =
      model::EncodeText(*options.tokenizer, in.text(), pair, limits.max_length, limits.truncation);
  if (!encoded.ok()) return encoded.status();
  *truncated = encoded->truncated;
  model::Sequence out;
  out.token_ids = std::move(encoded->input_ids);
  out.token_type_ids = std::move(encoded->token_type_ids);
  if (absl::Status s = model::ValidateSequence(info, out); !s.ok()) return s;
  return out;
}

// Copies one request sequence, truncating it when allowed, and validates it.
absl::StatusOr<model::Sequence> PrepareSequence(const pb::Sequence& in, const model::ModelInfo& info,
                                                const RequestOptions& options) {
  model::Sequence out;
  out.token_ids.assign(in.token_ids().begin(), in.token_ids().end());
  out.token_type_ids.assign(in.token_type_ids().begin(), in.token_type_ids().end());
  const size_t limit = static_cast<size_t>(info.max_sequence_length);
  if (options.truncate && out.token_ids.size() > limit && limit >= 2) {
    // Keep the final token ([SEP]) so the sequence stays well-formed.
    out.token_ids[limit - 1] = out.token_ids.back();
    out.token_ids.resize(limit);
    if (out.token_type_ids.size() > limit) {
      out.token_type_ids[limit - 1] = out.token_type_ids.back();
      out.token_type_ids.resize(limit);
    }
  }
  if (absl::Status s = model::ValidateSequence(info, out); !s.ok()) return s;
  return out;
}

}  // namespace

absl::StatusOr<ZeroShotTasks> BuildZeroShotTasks(const pb::ZeroShotClassifyRequest& request,
                                                 const model::ModelInfo& info, const RequestOptions& options) {
  if (!info.has_classifier) {
    return absl::FailedPreconditionError("the served model has no sequence-classification head");
  }
  if (options.tokenizer == nullptr) {
    return absl::FailedPreconditionError("zero-shot classification needs the checkpoint's tokenizer files");
  }
  ZeroShotTasks out;
  for (size_t i = 0; i < info.labels.size(); ++i) {
    const std::string label = absl::AsciiStrToLower(info.labels[i]);
    if (out.entailment < 0 && absl::StartsWith(label, "entail")) out.entailment = static_cast<int>(i);
    if (out.contradiction < 0 && absl::StartsWith(label, "contra")) out.contradiction = static_cast<int>(i);
  }
  if (out.entailment < 0 || out.contradiction < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "zero-shot classification needs an NLI model: its labels (", absl::StrJoin(info.labels, ", "),
        ") have no entailment and contradiction"));
  }
  const int n = request.candidate_labels_size();
  if (request.text().empty()) return absl::InvalidArgumentError("text is empty");
  if (n == 0) return absl::InvalidArgumentError("no candidate_labels");
  if (n > options.max_sequences_per_request) {
    return absl::InvalidArgumentError(absl::StrCat("request has ", n, " candidate_labels; the maximum is ",
                                                   options.max_sequences_per_request));
  }
  const std::string tmpl = request.hypothesis_template().empty() ? "This example is {}." : request.hypothesis_template();
  const size_t slot = tmpl.find("{}");
  if (slot == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("hypothesis_template '", tmpl, "' has no {} for the label"));
  }
  absl::StatusOr<TextLimits> limits = ResolveTextLimits(request.truncation(), request.max_length(), info, options);
  if (!limits.ok()) return limits.status();
  for (int i = 0; i < n; ++i) {
    pb::Sequence pair;
    pair.set_text(request.text());
    pair.set_text_pair(absl::StrCat(tmpl.substr(0, slot), request.candidate_labels(i), tmpl.substr(slot + 2)));
    auto task = std::make_unique<BatchTask>();
    absl::StatusOr<model::Sequence> sequence = EncodeSequence(pair, *limits, info, options, &task->truncated);
    if (!sequence.ok()) {
      return absl::Status(sequence.status().code(),
                          absl::StrCat("candidate ", i, ": ", sequence.status().message()));
    }
    task->endpoint = Endpoint::kClassify;
    task->from_text = true;
    task->input.sequence = *std::move(sequence);
    out.tasks.push_back(std::move(task));
  }
  return out;
}

std::vector<float> ZeroShotScores(const std::vector<std::vector<float>>& logits, int entailment,
                                  int contradiction, bool multi_label) {
  std::vector<float> scores(logits.size());
  if (multi_label) {
    // Per candidate: softmax over (entailment, contradiction).
    for (size_t i = 0; i < logits.size(); ++i) {
      const double e = logits[i][entailment], c = logits[i][contradiction];
      scores[i] = static_cast<float>(1.0 / (1.0 + std::exp(c - e)));
    }
    return scores;
  }
  // Softmax over the candidates of their entailment logits.
  double top = -std::numeric_limits<double>::infinity();
  for (const auto& l : logits) top = std::max<double>(top, l[entailment]);
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) sum += std::exp(logits[i][entailment] - top);
  for (size_t i = 0; i < logits.size(); ++i) {
    scores[i] = static_cast<float>(std::exp(logits[i][entailment] - top) / sum);
  }
  return scores;
}

absl::StatusOr<TextLimits> ResolveTextLimits(pb::Truncation truncation, int64_t max_length,
                                             const model::ModelInfo& info, const RequestOptions& options) {
  TextLimits limits;
  switch (truncation) {
    case pb::TRUNCATION_NONE: limits.truncation = model::Truncation::kNone; break;
    case pb::TRUNCATION_LONGEST_FIRST: limits.truncation = model::Truncation::kLongestFirst; break;
    case pb::TRUNCATION_ONLY_FIRST: limits.truncation = model::Truncation::kOnlyFirst; break;
    case pb::TRUNCATION_ONLY_SECOND: limits.truncation = model::Truncation::kOnlySecond; break;
    default:
      limits.truncation = options.truncate ? model::Truncation::kLongestFirst : model::Truncation::kNone;
  }
  limits.max_length = max_length == 0 ? info.max_sequence_length : max_length;
  if (limits.max_length < 3 || limits.max_length > info.max_sequence_length) {
    return absl::InvalidArgumentError(absl::StrCat("max_length is ", max_length, "; it must be 0 or in [3, ",
                                                   info.max_sequence_length, "]"));
  }
  return limits;
}

absl::StatusOr<ClassifyTasks> BuildClassifyTasks(const pb::ClassifyRequest& request,
                                                 const model::ModelInfo& info,
                                                 const RequestOptions& options) {
  if (!info.has_classifier) {
    return absl::FailedPreconditionError("the served model has no sequence-classification head");
  }
  const int n = request.sequences_size();
  if (absl::Status s = CheckSequenceCount(n, options); !s.ok()) return s;
  const int labels = static_cast<int>(info.labels.size());
  if (request.top_k() < 0 || request.top_k() > labels) {
    return absl::InvalidArgumentError(
        absl::StrCat("top_k is ", request.top_k(), "; it must be in [0, ", labels, "]"));
  }
  ClassifyTasks out;
  out.top_k = request.top_k() == 0 ? labels : request.top_k();
  out.tasks.reserve(n);
  std::optional<TextLimits> limits;  // Resolved at the first text sequence.
  for (int i = 0; i < n; ++i) {
    auto task = std::make_unique<BatchTask>();
    const pb::Sequence& in = request.sequences(i);
    absl::StatusOr<model::Sequence> sequence;
    if (IsText(in)) {
      if (!limits) {
        absl::StatusOr<TextLimits> resolved =
            ResolveTextLimits(request.truncation(), request.max_length(), info, options);
        if (!resolved.ok()) return resolved.status();
        limits = *resolved;
      }
      sequence = EncodeSequence(in, *limits, info, options, &task->truncated);
      task->from_text = true;
    } else {
      sequence = PrepareSequence(in, info, options);
    }
    if (!sequence.ok()) return ForSequence(i, sequence.status());
    task->endpoint = Endpoint::kClassify;
    task->input.sequence = *std::move(sequence);
    out.tasks.push_back(std::move(task));
  }
  return out;
}

absl::StatusOr<std::vector<std::unique_ptr<BatchTask>>> BuildFillMaskTasks(
    const pb::FillMaskRequest& request, const model::ModelInfo& info, const RequestOptions& options) {
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
  std::vector<std::unique_ptr<BatchTask>> tasks;
  tasks.reserve(n);
  for (int i = 0; i < n; ++i) {
    const pb::FillMaskSequence& in = request.sequences(i);
    auto task = std::make_unique<BatchTask>();
    task->endpoint = Endpoint::kFillMask;
    task->input.top_k = top_k;
    std::vector<int32_t>& positions = task->input.positions;
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
      task->input.sequence.token_ids = *std::move(ids);
      task->from_text = true;
      if (absl::Status s = model::ValidateSequence(info, task->input.sequence); !s.ok()) return ForSequence(i, s);
    } else {
      absl::StatusOr<model::Sequence> sequence = PrepareSequence(in.sequence(), info, options);
      if (!sequence.ok()) return ForSequence(i, sequence.status());
      task->input.sequence = *std::move(sequence);
      if (in.positions_size() > 0) {
        positions.assign(in.positions().begin(), in.positions().end());
      } else {
        const std::vector<int32_t>& ids = task->input.sequence.token_ids;
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
    if (absl::Status s = model::ValidateMaskedSequence(info, task->input); !s.ok()) {
      return ForSequence(i, s);
    }
    predicted += static_cast<int64_t>(task->input.positions.size());
    tasks.push_back(std::move(task));
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
  return tasks;
}

}  // namespace deberta::service
