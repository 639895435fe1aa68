// Special token ids (pad, cls, sep, unk, mask): read from a checkpoint's
// tokenizer files when present, otherwise the configured defaults.
#ifndef DEBERTA_SERVICE_SPECIAL_TOKENS_H_
#define DEBERTA_SERVICE_SPECIAL_TOKENS_H_

#include <string>

namespace deberta::service {

struct SpecialTokens {
  int pad = 0, cls = 1, sep = 2, unk = 3;
  int mask = -1;  // -1: unknown; fill-mask requests must name positions.
};

// Reads `dir`/tokenizer_config.json (its added_tokens_decoder and
// *_token names, completed by special_tokens_map.json). Fields not found
// keep their value in `defaults`.
SpecialTokens ReadSpecialTokens(const std::string& dir, SpecialTokens defaults);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_SPECIAL_TOKENS_H_
