// The flags of deberta-server beyond the engine's (ports, batcher, request
// limits, drain, special-token ids), and the one function that turns them
// into a ServerConfig.
#ifndef DEBERTA_SERVICE_SERVER_FLAGS_H_
#define DEBERTA_SERVICE_SERVER_FLAGS_H_

#include "absl/status/statusor.h"
#include "model/engine_options.h"
#include "model/tokenizer.h"
#include "service/server_config.h"

namespace deberta::service {

// Reads the flags, and the special-token ids of the checkpoint in
// `engine.model`: its `tokenizer`'s when it has one (may be null), else its
// tokenizer_config.json, else the *_token_id flags; the demo model's own
// ids for "demo". InvalidArgument naming the flag for a value out of range
// (checked as a signed value before any conversion) or a file that cannot
// be read; the result also passes ServerConfig::Validate.
absl::StatusOr<ServerConfig> ServerConfigFromFlags(const model::EngineOptions& engine,
                                                   const model::Tokenizer* tokenizer);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_SERVER_FLAGS_H_
