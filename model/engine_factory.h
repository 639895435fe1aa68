// Creating the LibTorch engine behind the torch-free Engine interface.
// Declared torch-free; defined in the model_torch library.
#ifndef DEBERTA_MODEL_ENGINE_FACTORY_H_
#define DEBERTA_MODEL_ENGINE_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "model/engine.h"
#include "model/engine_options.h"

namespace deberta::model {

// Loads the model of `options` and returns a ready engine. NotFound for a
// missing folder or file, InvalidArgument for a bad config or checkpoint,
// FailedPrecondition for an unavailable device.
absl::StatusOr<std::unique_ptr<Engine>> CreateTorchEngine(const EngineOptions& options);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_ENGINE_FACTORY_H_
