// The offline commands of deberta-cli, which load the model in this process:
//   deberta-cli run --model DIR|demo --inputs inputs.json --out out.safetensors
//       [--outputs a,b] [--device cpu|cuda:N] [--dtype float32|bfloat16|float16]
// runs one padded batch and writes the reference tensors;
//   deberta-cli make-random-model --shape deberta-v3-base --out DIR
// writes a random-weight checkpoint folder of a real model size (for
// benchmarks);
//   deberta-cli convert --model DIR [--out FILE]
// writes DIR/model.safetensors from the folder's pytorch_model.bin (or its
// shards). Each returns the process exit code.
#ifndef DEBERTA_TOOLS_OFFLINE_COMMANDS_H_
#define DEBERTA_TOOLS_OFFLINE_COMMANDS_H_

#include "model/engine_options.h"

namespace deberta::tools {

int RunCommand(const model::EngineOptions& engine);
int MakeRandomModelCommand();  // make_random_model_command.cc; needs the tokenizers.
int ConvertCommand(const model::EngineOptions& engine);

}  // namespace deberta::tools

#endif  // DEBERTA_TOOLS_OFFLINE_COMMANDS_H_
