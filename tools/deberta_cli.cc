// deberta-cli: the command-line tool of deberta-serve. Offline commands
// (run, make-random-model) are always built; with the service, also the
// client commands, the load generator and the engine benchmark.
#include <glog/logging.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "model/engine_factory.h"
#include "model/runtime.h"
#include "model/engine_flags.h"
#include "tools/offline_commands.h"
#include "tools/tokenize_command.h"
#ifdef DEBERTA_WITH_SERVICE
#include "tools/client_commands.h"
#include "tools/engine_bench.h"
#include "tools/load_generator.h"
#endif

namespace {

using deberta::model::EngineOptionsFromFlags;

// Runs `command` on the engine flags' options (exit code 2 for bad flags).
template <typename Command>
int WithEngineOptions(const std::string& name, Command command) {
  auto options = EngineOptionsFromFlags();
  if (!options.ok()) {
    std::cerr << "deberta-cli " << name << ": " << options.status().message() << "\n";
    return 2;
  }
  return command(*options);
}

// Loads the engine of the engine flags, then runs `command` on it.
template <typename Command>
int WithEngine(const std::string& name, Command command) {
  return WithEngineOptions(name, [&](const deberta::model::EngineOptions& options) {
    deberta::model::ConfigureRuntime(/*num_threads=*/1);  // The engine's thread is set up by the command.
    auto engine = deberta::model::CreateTorchEngine(options);
    if (!engine.ok()) {
      std::cerr << "deberta-cli " << name << ": " << engine.status() << "\n";
      return 1;
    }
    return command(**engine);
  });
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "deberta-cli COMMAND [flags]\n"
      "  run                offline: run a golden-format batch and write its tensors\n"
      "  make-random-model  write a random-weight checkpoint of a real size (benchmarks)\n"
      "  convert            write DIR/model.safetensors from pytorch_model.bin (--model DIR)\n"
      "  tokenize           --model DIR --jsonl: the checkpoint's tokenizer over JSON lines, offline;\n"
      "                     --text [--text_pair]: a server's tokenization\n"
#ifdef DEBERTA_WITH_SERVICE
      "  classify           send sequences to a server for classification\n"
      "  fill-mask          send sequences with mask tokens to a server\n"
      "  info               print the served model's description\n"
      "  zero-shot          zero-shot classification of --text over --labels (NLI checkpoints)\n"
      "  health             query the gRPC health service\n"
      "  bench              load-test a server\n"
      "  engine-bench       the same load on the engine alone, in batches\n"
#endif
  );
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  if (args.size() != 2) {
    std::cerr << (args.size() < 2 ? absl::ProgramUsageMessage()
                                  : "deberta-cli: unexpected argument '" + std::string(args[2]) + "'")
              << "\n";
    return 2;
  }
  const std::string command = args[1];
  if (command == "run") return WithEngineOptions(command, deberta::tools::RunCommand);
  if (command == "make-random-model") return deberta::tools::MakeRandomModelCommand();
  if (command == "convert") return WithEngineOptions(command, deberta::tools::ConvertCommand);
#ifdef DEBERTA_WITH_SERVICE
  if (command == "tokenize" && !deberta::tools::TokenizeOffline()) return deberta::tools::RemoteTokenizeCommand();
#endif
  if (command == "tokenize") {
    return WithEngineOptions(command, [](const deberta::model::EngineOptions& options) {
      return deberta::tools::TokenizeCommand(options.model);
    });
  }
#ifdef DEBERTA_WITH_SERVICE
  if (command == "classify") return deberta::tools::ClassifyCommand();
  if (command == "fill-mask") return deberta::tools::FillMaskCommand();
  if (command == "info") return deberta::tools::InfoCommand();
  if (command == "zero-shot") return deberta::tools::ZeroShotCommand();
  if (command == "health") return deberta::tools::HealthCommand();
  if (command == "bench") return deberta::tools::BenchCommand();
  if (command == "engine-bench") return WithEngine(command, deberta::tools::EngineBenchCommand);
  std::cerr << "deberta-cli: unknown command '" << command
            << "' (run, make-random-model, convert, tokenize, classify, zero-shot, fill-mask, info, health, bench, engine-bench)\n";
#else
  std::cerr << "deberta-cli: unknown command '" << command
            << "' (this build has only run, make-random-model, convert and tokenize; build with DEBERTA_WITH_SERVICE=ON for "
               "client commands)\n";
#endif
  return 2;
}
