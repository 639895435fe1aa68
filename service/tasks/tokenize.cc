// The Tokenize task.
#include "service/tasks/tokenize.h"

#include <optional>

#include "model/text_encoding.h"

namespace deberta::service {

namespace pb = serving::v1;

absl::StatusOr<TaskWork> StartTokenize(const TaskEnv& env, const pb::TokenizeRequest& request,
                                       pb::TokenizeResponse* response) {
  const model::Tokenizer* tokenizer = env.requests.tokenizer;
  if (tokenizer == nullptr) return absl::FailedPreconditionError("the served checkpoint has no tokenizer files");
  absl::StatusOr<TextLimits> limits =
      ResolveTextLimits(request.truncation(), request.max_length(), env.info, env.requests);
  if (!limits.ok()) return limits.status();
  std::optional<absl::string_view> pair;
  if (request.has_text_pair()) pair = request.text_pair();
  absl::StatusOr<model::EncodedText> encoded =
      model::EncodeText(*tokenizer, request.text(), pair, limits->max_length, limits->truncation);
  if (!encoded.ok()) return encoded.status();
  const model::SpecialTokens& special = tokenizer->special_tokens();
  for (int32_t id : encoded->input_ids) {
    response->add_token_ids(id);
    response->add_pieces(id == special.cls ? "[CLS]" : id == special.sep ? "[SEP]" : tokenizer->Piece(id));
  }
  for (int32_t type : encoded->token_type_ids) response->add_token_type_ids(type);
  const model::CharIndex chars_a(request.text()), chars_b(request.text_pair());
  for (size_t i = 0; i < encoded->offsets.size(); ++i) {
    const model::CharIndex& chars = encoded->token_type_ids[i] == 0 ? chars_a : chars_b;
    const auto [begin, end] = chars.Map(encoded->offsets[i].first, encoded->offsets[i].second);
    pb::TokenOffset* offset = response->add_offsets();
    offset->set_begin(begin);
    offset->set_end(end);
  }
  response->set_truncated(encoded->truncated);
  response->set_full_length(static_cast<int32_t>(encoded->full_length));
  return TaskWork{};
}

}  // namespace deberta::service
