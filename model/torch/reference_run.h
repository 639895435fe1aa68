// The offline reference run behind `deberta-cli run`: one padded batch in
// the golden inputs.json format through the model, writing the named
// intermediate tensors to a safetensors file, so anyone can compare this
// implementation with a reference. Torch-free interface.
#ifndef DEBERTA_MODEL_TORCH_REFERENCE_RUN_H_
#define DEBERTA_MODEL_TORCH_REFERENCE_RUN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "model/engine_options.h"

namespace deberta::model {

// The tensors written when none are named.
std::vector<std::string> DefaultReferenceOutputs();

struct ReferenceRunOptions {
  EngineOptions engine;      // model, device, dtype, threads.
  std::string inputs_path;   // inputs.json: input_ids, attention_mask, token_type_ids.
  std::string output_path;   // .safetensors to write.
  // Names from the golden README; "hidden_states.k" means every
  // hidden_states.0..N. Empty: DefaultReferenceOutputs(). Only what these
  // need is computed (no MLM head for classifier_logits, no EMD unless an
  // EMD output is named).
  std::vector<std::string> outputs;
};

// NotFound / InvalidArgument for bad files or names (the message lists the
// available names).
absl::Status RunReferenceBatch(const ReferenceRunOptions& options);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_REFERENCE_RUN_H_
