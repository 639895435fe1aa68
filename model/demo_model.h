// The built-in "demo" model: a small DeBERTa-v3-like configuration with
// deterministic pseudo-random weights, so the server, the CLI and the tests
// run with nothing downloaded. Its outputs carry no meaning, and its
// ModelInfo says so. Torch-free: the weights are produced as a safetensors
// buffer that goes through the ordinary checkpoint loader.
#ifndef DEBERTA_MODEL_DEMO_MODEL_H_
#define DEBERTA_MODEL_DEMO_MODEL_H_

#include <string>

#include "absl/status/status.h"

namespace deberta::model {

inline constexpr char kDemoModelName[] = "demo";

// Special token ids of the demo model's (imaginary) tokenizer.
inline constexpr int kDemoPadId = 0, kDemoClsId = 1, kDemoSepId = 2, kDemoUnkId = 3,
                     kDemoMaskId = 4;

// config.json text of the demo model.
std::string DemoConfigJson();

// model.safetensors bytes of the demo model (union checkpoint: backbone,
// sequence classifier and MLM head). The same bytes on every machine.
std::string DemoCheckpointBytes();

// Writes config.json, model.safetensors and tokenizer_config.json into
// `dir` (which must exist), making a checkpoint folder of the demo model.
absl::Status WriteDemoCheckpoint(const std::string& dir);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_DEMO_MODEL_H_
