// deberta-cli: the command-line tool of deberta-serve. Offline commands
// (run, make-random-model) are always built; with the service, also the
// client commands, the load generator and the engine benchmark. Without
// the tokenizers (the GPU check's build), only run and convert.
#ifdef DEBERTA_WITH_GLOG
#include <glog/logging.h>
#endif

#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "model/engine_factory.h"
#include "model/runtime.h"
#include "model/engine_flags.h"
#include "tools/cli_help.h"
#include "tools/offline_commands.h"
#ifdef DEBERTA_WITH_TOKENIZERS
#include "tools/tokenize_command.h"
#endif
#ifdef DEBERTA_WITH_SERVICE
#include "service/mutex_deadlock_detection.h"
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
    // One thread: the engine's is set up by the command.
    deberta::model::ConfigureRuntime(deberta::model::RuntimeOptionsFromFlags(/*num_threads=*/1));
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
#ifdef DEBERTA_WITH_SERVICE
  deberta::service::ConfigureMutexDeadlockDetection();  // The client commands lock gRPC's mutexes.
#endif
  deberta::tools::ConfigureHelp();
  absl::SetProgramUsageMessage(deberta::tools::Usage());
  // `deberta-cli COMMAND --help`: that command's flags (absl's own --help
  // would list every flag of the binary).
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg != "--help" && arg != "-help" && arg != "-h") continue;
    const std::string help = argc > 1 ? deberta::tools::CommandHelp(argv[1]) : "";
    std::cout << (help.empty() ? deberta::tools::Usage() : help);
    return 0;
  }
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
#ifdef DEBERTA_WITH_GLOG
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
#endif
  if (args.size() != 2) {
    std::cerr << (args.size() < 2 ? absl::ProgramUsageMessage()
                                  : "deberta-cli: unexpected argument '" + std::string(args[2]) + "'")
              << "\n";
    return deberta::tools::kExitUsage;
  }
  const std::string command = args[1];
  if (command == "run") return WithEngineOptions(command, deberta::tools::RunCommand);
  if (command == "convert") return WithEngineOptions(command, deberta::tools::ConvertCommand);
#ifdef DEBERTA_WITH_TOKENIZERS
  if (command == "make-random-model") return deberta::tools::MakeRandomModelCommand();
#ifdef DEBERTA_WITH_SERVICE
  if (command == "tokenize" && !deberta::tools::TokenizeOffline()) return deberta::tools::RemoteTokenizeCommand();
#endif
  if (command == "tokenize") {
    return WithEngineOptions(command, [](const deberta::model::EngineOptions& options) {
      return deberta::tools::TokenizeCommand(options.model);
    });
  }
#endif  // DEBERTA_WITH_TOKENIZERS
#ifdef DEBERTA_WITH_SERVICE
  if (command == "classify") return deberta::tools::ClassifyCommand();
  if (command == "classify-tokens") return deberta::tools::ClassifyTokensCommand();
  if (command == "rerank") return deberta::tools::RerankCommand();
  if (command == "fill-mask") return deberta::tools::FillMaskCommand();
  if (command == "info") return deberta::tools::InfoCommand();
  if (command == "zero-shot") return deberta::tools::ZeroShotCommand();
  if (command == "health") return deberta::tools::HealthCommand();
  if (command == "models") return deberta::tools::ModelsCommand();
  if (command == "load-model") return deberta::tools::LoadModelCommand(/*load=*/true);
  if (command == "unload-model") return deberta::tools::LoadModelCommand(/*load=*/false);
  if (command == "bench") return deberta::tools::BenchCommand();
  if (command == "engine-bench") return WithEngine(command, deberta::tools::EngineBenchCommand);
  std::cerr << "deberta-cli: unknown command '" << command << "'\n" << deberta::tools::Usage();
#else
  std::cerr << "deberta-cli: unknown command '" << command
#ifdef DEBERTA_WITH_TOKENIZERS
            << "' (this build has only run, make-random-model, convert and tokenize; build with DEBERTA_WITH_SERVICE=ON for "
               "client commands)\n";
#else
            << "' (this build has only run and convert: it was built without tokenizers and service)\n";
#endif
#endif
  return deberta::tools::kExitUsage;
}
