// The flags that choose and place the model (--model, --device, --dtype,
// --threads, --emd, --max_sequence_length), shared by deberta-server and
// deberta-cli, and the one function that turns them into EngineOptions.
#ifndef DEBERTA_MODEL_ENGINE_FLAGS_H_
#define DEBERTA_MODEL_ENGINE_FLAGS_H_

#include "absl/status/statusor.h"
#include "model/engine_options.h"

namespace deberta::model {

// InvalidArgument naming the flag for an unknown dtype or EMD mode, a
// negative or absurd thread count, or a negative sequence length.
absl::StatusOr<EngineOptions> EngineOptionsFromFlags();

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_ENGINE_FLAGS_H_
