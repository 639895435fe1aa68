// deberta-cli: the command-line tool of deberta-serve.
//   deberta-cli run --model DIR|demo --inputs inputs.json --out out.safetensors
//       [--outputs a,b] [--device cpu|cuda:N] [--dtype float32|bfloat16|float16]
// runs one padded batch offline and writes the reference tensors.
//   deberta-cli make-random-model --shape deberta-v3-base --out DIR
// writes a random-weight checkpoint folder of a real model size (for
// benchmarks). With the service built, it also talks to a running server,
// and engine-bench measures the engine alone (see --help).
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "model/demo_model.h"
#include "model/engine_factory.h"
#include "model/engine_options.h"
#include "model/torch/reference_run.h"
#ifdef DEBERTA_WITH_SERVICE
#include "service/client/client_commands.h"
#endif

ABSL_FLAG(std::string, model, "demo",
          "run, engine-bench: checkpoint folder (config.json + model.safetensors) or 'demo'");
ABSL_FLAG(std::string, inputs, "", "run: inputs.json in the golden format");
ABSL_FLAG(std::string, out, "", "run: output .safetensors path; make-random-model: output folder");
ABSL_FLAG(std::string, shape, "deberta-v3-base", "make-random-model: deberta-v3-base or demo");
ABSL_FLAG(std::string, outputs, "",
          "run: comma-separated tensor names (default: hidden_states.k, last_hidden_state, "
          "pooled_output, classifier_logits, mlm_logits_emd, mlm_logits_no_emd)");
ABSL_FLAG(std::string, device, "cpu", "run, engine-bench: cpu or cuda:N");
ABSL_FLAG(std::string, dtype, "float32", "run, engine-bench: float32, bfloat16 or float16");
ABSL_FLAG(int, threads, 0, "run, engine-bench: CPU threads (0 = all cores)");

namespace {

absl::StatusOr<deberta::model::EngineOptions> EngineOptionsFromFlags() {
  deberta::model::EngineOptions options;
  options.model = absl::GetFlag(FLAGS_model);
  options.device = absl::GetFlag(FLAGS_device);
  options.num_threads = absl::GetFlag(FLAGS_threads);
  auto dtype = deberta::model::ParseComputeDType(absl::GetFlag(FLAGS_dtype));
  if (!dtype.ok()) return dtype.status();
  options.dtype = *dtype;
  return options;
}

int RunCommand() {
  deberta::model::ReferenceRunOptions options;
  auto engine_options = EngineOptionsFromFlags();
  if (!engine_options.ok()) {
    std::cerr << "deberta-cli run: " << engine_options.status().message() << "\n";
    return 2;
  }
  options.engine = *engine_options;
  options.inputs_path = absl::GetFlag(FLAGS_inputs);
  options.output_path = absl::GetFlag(FLAGS_out);
  if (options.inputs_path.empty() || options.output_path.empty()) {
    std::cerr << "deberta-cli run: --inputs and --out are required\n";
    return 2;
  }
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_outputs), ',', absl::SkipEmpty())) {
    options.outputs.emplace_back(name);
  }
  absl::Status status = deberta::model::RunReferenceBatch(options);
  if (!status.ok()) {
    std::cerr << "deberta-cli run: " << status << "\n";
    return 1;
  }
  std::cout << "wrote " << options.output_path << "\n";
  return 0;
}

int MakeRandomModelCommand() {
  const std::string shape_name = absl::GetFlag(FLAGS_shape), dir = absl::GetFlag(FLAGS_out);
  deberta::model::RandomModelShape shape;
  if (shape_name == "deberta-v3-base") {
    shape = deberta::model::DebertaV3BaseShape();
  } else if (shape_name == "demo") {
    shape = deberta::model::DemoModelShape();
  } else {
    std::cerr << "deberta-cli make-random-model: unknown --shape '" << shape_name
              << "' (deberta-v3-base, demo)\n";
    return 2;
  }
  if (dir.empty()) {
    std::cerr << "deberta-cli make-random-model: --out DIR is required\n";
    return 2;
  }
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (absl::Status s = deberta::model::WriteRandomCheckpoint(dir, shape); !s.ok()) {
    std::cerr << "deberta-cli make-random-model: " << s << "\n";
    return 1;
  }
  std::cout << "wrote " << shape.name << " to " << dir << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "deberta-cli COMMAND [flags]\n"
      "  run                offline: run a golden-format batch and write its tensors\n"
      "  make-random-model  write a random-weight checkpoint of a real size (benchmarks)\n"
#ifdef DEBERTA_WITH_SERVICE
      "  classify           send sequences to a server for classification\n"
      "  fill-mask          send sequences with mask tokens to a server\n"
      "  info               print the served model's description\n"
      "  health             query the gRPC health service\n"
      "  bench              load-test a server\n"
      "  engine-bench       the same load on the engine alone, in batches\n"
#endif
  );
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::cerr << absl::ProgramUsageMessage() << "\n";
    return 2;
  }
  const std::string command = args[1];
  if (command == "run") return RunCommand();
  if (command == "make-random-model") return MakeRandomModelCommand();
#ifdef DEBERTA_WITH_SERVICE
  auto make_engine = []() -> absl::StatusOr<std::unique_ptr<deberta::model::Engine>> {
    auto options = EngineOptionsFromFlags();
    if (!options.ok()) return options.status();
    return deberta::model::CreateTorchEngine(*options);
  };
  return deberta::service::RunClientCommand(command, std::vector<std::string>(args.begin() + 2, args.end()),
                                            make_engine);
#else
  std::cerr << "deberta-cli: unknown command '" << command
            << "' (this build has only 'run'; build with DEBERTA_WITH_SERVICE=ON for client commands)\n";
  return 2;
#endif
}
