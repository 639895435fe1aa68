// deberta-server: loads a DeBERTa checkpoint (or the demo model) and serves
// it over gRPC until SIGTERM/SIGINT, then drains and exits 0.
#include <glog/logging.h>

#include <csignal>
#include <iostream>
#include <thread>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "model/demo_model.h"
#include "model/demo_tokenizer.h"
#include "model/engine_factory.h"
#include "model/runtime.h"
#include "model/engine_flags.h"
#include "service/mutex_deadlock_detection.h"
#include "service/server.h"
#include "service/server_flags.h"

namespace {

int Fail(const absl::Status& status) {
  LOG(ERROR) << "deberta-server: " << status;
  return 1;
}

// Serves until SIGTERM or SIGINT (blocked in every thread: main blocks
// them before any thread starts), then drains; returns the exit code.
int ServeUntilSignal(deberta::service::Server& server) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  std::thread signal_thread([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    std::cout << "deberta-server: signal " << signal << ", draining" << std::endl;
    server.Shutdown();
  });
  server.Wait();
  signal_thread.join();
  std::cout << "deberta-server: stopped" << std::endl;
  return 0;
}

// --model_repository: every model of the folder, each with its own
// engines (LibTorch's), batcher and settings.
int ServeRepository(const deberta::service::ServerConfig& config) {
  deberta::service::Server server(config, &deberta::model::CreateTorchEngine,
                                  std::make_shared<prometheus::Registry>());
  if (absl::Status s = server.Start(); !s.ok()) return Fail(s);
  std::vector<std::string> served;
  for (const deberta::service::ModelStatusInfo& model : server.models().List()) {
    served.push_back(absl::StrCat(model.name, " v", model.version, " (", model.task, ", ", model.device, ", ",
                                  model.dtype, ", ", deberta::service::ModelStateName(model.state), ")"));
  }
  std::cout << "deberta-server " << DEBERTA_SERVE_VERSION << ": serving " << absl::StrJoin(served, ", ")
            << " from " << config.models.repository << " on " << config.listen_address << ":" << server.port()
            << ", metrics on :" << server.metrics_port() << ", http on :" << server.http_port() << std::endl;
  return ServeUntilSignal(server);
}

}  // namespace

ABSL_DECLARE_FLAG(std::string, model_repository);

int main(int argc, char** argv) {
  deberta::service::ConfigureMutexDeadlockDetection();
  absl::SetProgramUsageMessage("deberta-server --model=DIR|demo [--port=50051] [--metrics_port=9464]");
  absl::ParseCommandLine(argc, argv);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;  // Containers collect stderr; no log files.

  // Signals are taken by a dedicated thread (sigwait), so shutdown runs
  // outside any signal handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto engine_options = deberta::model::EngineOptionsFromFlags();
  if (!engine_options.ok()) return Fail(engine_options.status());
  const bool repository = !absl::GetFlag(FLAGS_model_repository).empty();
  // The checkpoint's own tokenizer, when its folder has one: text requests.
  // (With a repository each model loads its own.)
  std::unique_ptr<deberta::model::Tokenizer> tokenizer;
  if (!repository) {
    const bool demo = engine_options->model == deberta::model::kDemoModelName;
    auto loaded = demo ? deberta::model::DemoTokenizer() : deberta::model::LoadTokenizer(engine_options->model);
    if (loaded.ok()) {
      tokenizer = *std::move(loaded);
    } else if (absl::IsFailedPrecondition(loaded.status())) {
      LOG(WARNING) << loaded.status().message() << "; only token ids will be accepted";
    } else {
      return Fail(loaded.status());
    }
  }
  auto config = deberta::service::ServerConfigFromFlags(*engine_options, tokenizer.get());
  if (!config.ok()) return Fail(config.status());
  if (absl::Status s = deberta::model::SetWarmupFromFlag(static_cast<int64_t>(config->batcher.max_batch_size),
                                                         config->batcher.max_batch_tokens, *engine_options);
      !s.ok()) {
    return Fail(s);
  }
  const int threads = deberta::model::ResolveThreadCount(engine_options->num_threads);
  auto replicas = deberta::model::ReplicaOptionsFromFlags(*engine_options, threads);
  if (!replicas.ok()) return Fail(replicas.status());
  config->models.replicas = static_cast<int>(replicas->size());
  config->models.cpu_cores = threads;
  LOG(INFO) << "deberta-server " << DEBERTA_SERVE_VERSION << ": model=" << engine_options->model
            << " device=" << engine_options->device
            << " dtype=" << deberta::model::ComputeDTypeName(engine_options->dtype) << " threads=" << threads
            << " replicas=" << replicas->size() << " emd=" << deberta::model::EmdModeName(engine_options->emd)
            << " tokenizer=" << (tokenizer ? tokenizer->kind() : "none") << " " << config->Describe();

  // The main thread only loads the model; batches run on the batcher's
  // threads, one per replica, which get the intra-op threads (see
  // ConfigureRuntime).
  deberta::model::ConfigureRuntime(deberta::model::RuntimeOptionsFromFlags(/*num_threads=*/1));
  if (repository) return ServeRepository(*config);
  std::vector<std::unique_ptr<deberta::model::Engine>> engines;
  for (size_t r = 0; r < replicas->size(); ++r) {
    const deberta::model::EngineOptions& options = (*replicas)[r];
    if (replicas->size() > 1) {
      LOG(INFO) << "replica " << r << ": device=" << options.device << " threads=" << options.num_threads;
    }
    auto engine = deberta::model::CreateTorchEngine(options);
    if (!engine.ok()) return Fail(engine.status());
    engines.push_back(*std::move(engine));
  }
  const deberta::model::ModelInfo info = engines.front()->info();
  if (!info.cpu_kernels.empty()) LOG(INFO) << info.cpu_kernels;  // What the CPU backend chose, and why.
  const size_t replica_count = engines.size();
  deberta::service::Server server(*config, std::move(engines), std::make_shared<prometheus::Registry>(),
                                  std::move(tokenizer));
  if (absl::Status s = server.Start(); !s.ok()) return Fail(s);
  // Standard output carries three lines for scripts and supervisors (the
  // bound ports, the signal, the end); everything else is logged to stderr.
  std::cout << "deberta-server " << DEBERTA_SERVE_VERSION << ": serving "
            << (config->models.model_name.empty() ? info.name : config->models.model_name) << " ("
            << info.model_type << ", " << info.device << ", " << info.dtype << ", EMD "
            << (info.emd_enabled ? "on" : "off")
            << (replica_count > 1 ? absl::StrCat(", ", replica_count, " replicas") : std::string()) << ") on "
            << config->listen_address << ":"
            << server.port() << ", metrics on :" << server.metrics_port() << ", http on :" << server.http_port()
            << std::endl;

  return ServeUntilSignal(server);
}
