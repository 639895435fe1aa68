// Special token ids (pad, cls, sep, unk, mask) of a checkpoint, read from
// its Hugging Face tokenizer files when present, otherwise the configured
// defaults. Torch-free.
#ifndef DEBERTA_MODEL_SPECIAL_TOKENS_H_
#define DEBERTA_MODEL_SPECIAL_TOKENS_H_

#include <string>

#include "absl/status/statusor.h"

namespace deberta::model {

struct SpecialTokens {
  int pad = 0, cls = 1, sep = 2, unk = 3;
  int mask = -1;  // -1: unknown; fill-mask requests must name positions.
};

// Reads `dir`/tokenizer_config.json (its added_tokens_decoder and
// *_token names, completed by special_tokens_map.json). Fields not found
// keep their value in `defaults`; with no tokenizer_config.json at all the
// result is `defaults`. InvalidArgument names the file when one that exists
// cannot be read or is not a JSON object, or when added_tokens_decoder has
// a key that is not a token id.
absl::StatusOr<SpecialTokens> ReadSpecialTokens(const std::string& dir, SpecialTokens defaults);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_SPECIAL_TOKENS_H_
