// deberta-cli: the command-line tool of deberta-serve.
//   deberta-cli run --model DIR|demo --inputs inputs.json --out out.safetensors
//       [--outputs a,b] [--device cpu|cuda:N] [--dtype float32|bfloat16|float16]
// runs one padded batch offline and writes the reference tensors. With the
// service built, it also talks to a running server (see --help).
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "model/engine_options.h"
#include "model/torch/reference_run.h"
#ifdef DEBERTA_WITH_SERVICE
#include "service/client/client_commands.h"
#endif

ABSL_FLAG(std::string, model, "demo", "run: checkpoint folder (config.json + model.safetensors) or 'demo'");
ABSL_FLAG(std::string, inputs, "", "run: inputs.json in the golden format");
ABSL_FLAG(std::string, out, "", "run: output .safetensors path");
ABSL_FLAG(std::string, outputs, "",
          "run: comma-separated tensor names (default: hidden_states.k, last_hidden_state, "
          "pooled_output, classifier_logits, mlm_logits_emd, mlm_logits_no_emd)");
ABSL_FLAG(std::string, device, "cpu", "run: cpu or cuda:N");
ABSL_FLAG(std::string, dtype, "float32", "run: float32, bfloat16 or float16");
ABSL_FLAG(int, threads, 0, "run: CPU threads (0 = all cores)");

namespace {

int RunCommand() {
  deberta::model::ReferenceRunOptions options;
  options.engine.model = absl::GetFlag(FLAGS_model);
  options.engine.device = absl::GetFlag(FLAGS_device);
  options.engine.num_threads = absl::GetFlag(FLAGS_threads);
  auto dtype = deberta::model::ParseComputeDType(absl::GetFlag(FLAGS_dtype));
  if (!dtype.ok()) {
    std::cerr << "deberta-cli run: " << dtype.status().message() << "\n";
    return 2;
  }
  options.engine.dtype = *dtype;
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

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "deberta-cli COMMAND [flags]\n"
      "  run        offline: run a golden-format batch and write its tensors\n"
#ifdef DEBERTA_WITH_SERVICE
      "  classify   send sequences to a server for classification\n"
      "  fill-mask  send sequences with mask tokens to a server\n"
      "  info       print the served model's description\n"
      "  health     query the gRPC health service\n"
      "  bench      load-test a server\n"
#endif
  );
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::cerr << absl::ProgramUsageMessage() << "\n";
    return 2;
  }
  const std::string command = args[1];
  if (command == "run") return RunCommand();
#ifdef DEBERTA_WITH_SERVICE
  return deberta::service::RunClientCommand(command, std::vector<std::string>(args.begin() + 2, args.end()));
#else
  std::cerr << "deberta-cli: unknown command '" << command
            << "' (this build has only 'run'; build with DEBERTA_WITH_SERVICE=ON for client commands)\n";
  return 2;
#endif
}
