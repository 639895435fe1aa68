// Server: owns the models (each with its engine replicas and batcher), the
// gRPC server (inference, health, reflection), the /metrics and JSON HTTP
// servers and the credentials (TLS, API keys, admin keys), and orders their
// start-up and shutdown.
#ifndef DEBERTA_SERVICE_SERVER_H_
#define DEBERTA_SERVICE_SERVER_H_

#include <grpcpp/channel.h>
#include <grpcpp/server.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "model/engine.h"
#include "model/tokenizer.h"
#include "service/api_keys.h"
#include "service/batcher.h"
#include "service/inference_service.h"
#include "service/metrics.h"
#include "service/models/models.h"
#include "service/server_config.h"
#include "service/http_server.h"
#include "service/protocols/grpc_adapter.h"
#include "service/protocols/kserve_grpc.h"
#include "service/protocols/tei_grpc.h"

namespace deberta::service {

// Start() once, then Shutdown() (or let the destructor do it). Shutdown is
// idempotent and safe to call from several threads (a signal-handling
// thread, the destructor).
class Server {
 public:
  // Takes ownership of the engines (replicas of one model, at least one,
  // each with its own executor thread behind the one batcher) and of the
  // checkpoint's tokenizer (null when it has none: only token ids are then
  // accepted). `registry` may be shared (tests).
  Server(ServerConfig config, std::vector<std::unique_ptr<model::Engine>> engines,
         std::shared_ptr<prometheus::Registry> registry,
         std::unique_ptr<model::Tokenizer> tokenizer = nullptr);
  // One engine.
  Server(ServerConfig config, std::unique_ptr<model::Engine> engine,
         std::shared_ptr<prometheus::Registry> registry,
         std::unique_ptr<model::Tokenizer> tokenizer = nullptr);
  // The models of config.models.repository, whose engines `create` makes.
  Server(ServerConfig config, EngineFactory create, std::shared_ptr<prometheus::Registry> registry);
  ~Server();

  // Binds the ports, loads the models (each batcher's executor threads
  // initialize and warm up its engines), then reports SERVING (the server,
  // and each model by its name). FailedPrecondition if the replicas are
  // not one model; any model's load error with a repository.
  absl::Status Start();
  // Health NOT_SERVING, refuse new work, let accepted work finish within
  // the drain timeout, stop the batcher. Idempotent.
  void Shutdown();
  // Blocks until the gRPC server has shut down.
  void Wait();

  int port() const { return bound_port_; }
  int metrics_port() const;
  int http_port() const { return json_http_ ? json_http_->port() : -1; }
  // The server's own metrics (calls refused before a model was found); its
  // registry holds every model's too.
  ServiceMetrics& metrics() { return metrics_; }
  Models& models() { return *models_; }

 private:
  // The parts of Start() that bind: /metrics, then gRPC.
  absl::Status StartMetrics();
  absl::Status StartGrpc();
  // The JSON API, calling the gRPC service in process.
  absl::Status StartJsonApi();

  // Health (per model, and the server: every model ready) and build info
  // when a model's readiness changes.
  void OnReadinessChange(const std::string& model, bool ready);
  // The one model of --model, or the repository's, loaded and started.
  absl::Status LoadModels();

  ServerConfig config_;
  // The one model's replicas and tokenizer until Start gives them to models_.
  std::vector<std::unique_ptr<model::Engine>> engines_;
  std::unique_ptr<model::Tokenizer> tokenizer_;
  ServiceMetrics metrics_;
  std::unique_ptr<Models> models_;
  std::unique_ptr<InferenceServiceImpl> service_;
  // TEI's and KServe's gRPC APIs on the gRPC port (service/protocols/):
  // registered before the server starts, so declared before it.
  std::unique_ptr<GrpcAdapterBackend> grpc_adapters_;
  std::unique_ptr<TeiGrpcServices> tei_grpc_;
  std::unique_ptr<KserveGrpcService> kserve_grpc_;
  std::unique_ptr<grpc::Server> grpc_server_;
  // The adapters' calls into the gRPC service (declared after the server,
  // so released before it).
  std::shared_ptr<grpc::Channel> in_process_channel_;
  std::unique_ptr<ApiKeys> api_keys_;             // With --api_keys_file.
  std::unique_ptr<ApiKeys> admin_keys_;           // With --admin_api_keys_file.
  std::unique_ptr<HttpServer> metrics_http_;      // /metrics, unless off.
  std::unique_ptr<HttpServer> json_http_;         // The JSON API, when on.
  std::unique_ptr<AccessLog> access_log_;
  int bound_port_ = 0;
  // Held for the whole shutdown, so a second caller returns only once the
  // first has finished.
  absl::Mutex shutdown_mu_;
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_SERVER_H_
