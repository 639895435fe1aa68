// Request sequences into model inputs, and the checks the tasks share.
#include "service/request_builder.h"

#include <optional>

#include "absl/strings/str_cat.h"

namespace deberta::service {

namespace pb = serving::v1;

absl::Status CheckSequenceCount(int count, const RequestOptions& options) {
  if (count == 0) return absl::InvalidArgumentError("request has no sequences");
  if (count > options.max_sequences_per_request) {
    return absl::InvalidArgumentError(absl::StrCat("request has ", count, " sequences; the maximum is ",
                                                   options.max_sequences_per_request));
  }
  return absl::OkStatus();
}

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

}  // namespace deberta::service
