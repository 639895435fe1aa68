// run and convert (make-random-model: make_random_model_command.cc).
#include "tools/offline_commands.h"

#include <filesystem>
#include <iostream>
#include <map>

#include "absl/flags/flag.h"
#include "absl/strings/str_split.h"
#include "model/checkpoint_files.h"
#include "model/demo_model.h"
#include "model/engine_flags.h"
#include "model/runtime.h"
#include "model/torch/reference_run.h"

ABSL_FLAG(std::string, inputs, "", "run: inputs.json in the golden format");
ABSL_FLAG(std::string, out, "",
          "run: output .safetensors path; make-random-model: output folder; convert: output file "
          "(default DIR/model.safetensors)");
ABSL_FLAG(std::string, outputs, "",
          "run: comma-separated tensor names (default: hidden_states.k, last_hidden_state, "
          "pooled_output, classifier_logits, mlm_logits_emd, mlm_logits_no_emd)");

namespace deberta::tools {

int RunCommand(const model::EngineOptions& engine) {
  model::ReferenceRunOptions options;
  options.engine = engine;
  options.inputs_path = absl::GetFlag(FLAGS_inputs);
  options.output_path = absl::GetFlag(FLAGS_out);
  if (options.inputs_path.empty() || options.output_path.empty()) {
    std::cerr << "deberta-cli run: --inputs and --out are required\n";
    return 2;
  }
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_outputs), ',', absl::SkipEmpty())) {
    options.outputs.emplace_back(name);
  }
  // One thread loads and runs: it gets every intra-op thread.
  model::ConfigureRuntime(model::RuntimeOptionsFromFlags(engine.num_threads));
  absl::Status status = model::RunReferenceBatch(options);
  if (!status.ok()) {
    std::cerr << "deberta-cli run: " << status << "\n";
    return 1;
  }
  std::cout << "wrote " << options.output_path << "\n";
  return 0;
}

int ConvertCommand(const model::EngineOptions& engine) {
  const std::string out = absl::GetFlag(FLAGS_out).empty() ? engine.model + "/model.safetensors"
                                                          : absl::GetFlag(FLAGS_out);
  if (std::filesystem::exists(out)) {
    std::cerr << "deberta-cli convert: " << out << " exists already\n";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<model::SafetensorsFile>> weights = model::OpenCheckpointWeights(engine.model);
  if (!weights.ok()) {
    std::cerr << "deberta-cli convert: " << weights.status() << "\n";
    return 1;
  }
  std::map<std::string, model::OwnedTensor> tensors;
  for (const std::string& name : (*weights)->Names()) {
    absl::StatusOr<model::TensorView> view = (*weights)->Get(name);
    if (!view.ok()) {
      std::cerr << "deberta-cli convert: " << view.status() << "\n";
      return 1;
    }
    tensors[name] = {view->dtype, view->shape,
                     std::string(reinterpret_cast<const char*>(view->data), view->num_bytes)};
  }
  if (absl::Status s = model::WriteSafetensors(out, tensors); !s.ok()) {
    std::cerr << "deberta-cli convert: " << s << "\n";
    return 1;
  }
  std::cout << "wrote " << tensors.size() << " tensors to " << out << "\n";
  return 0;
}

}  // namespace deberta::tools
