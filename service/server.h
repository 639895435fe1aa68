// Server: owns the engine, the batcher, the gRPC server (inference,
// health, reflection) and the metrics exposer, and orders their start-up
// and shutdown.
#ifndef DEBERTA_SERVICE_SERVER_H_
#define DEBERTA_SERVICE_SERVER_H_

#include <grpcpp/server.h>
#include <prometheus/exposer.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "model/engine.h"
#include "service/batcher.h"
#include "service/inference_service.h"
#include "service/metrics.h"

namespace deberta::service {

struct ServerConfig {
  std::string listen_address = "0.0.0.0";
  int port = 50051;           // 0 picks a free port (tests).
  int metrics_port = 9464;    // 0 picks a free port; -1 disables the exposer.
  Batcher::Options batcher;
  InferenceServiceImpl::Options service;
  absl::Duration drain_timeout = absl::Seconds(20);
  int max_message_bytes = 16 << 20;

  absl::Status Validate() const;
};

// Start() once, then Shutdown() once (or let the destructor do it).
// Thread-safe for Shutdown from a signal-handling thread.
class Server {
 public:
  // Takes ownership of the engine. `registry` may be shared (tests).
  Server(ServerConfig config, std::unique_ptr<model::Engine> engine,
         std::shared_ptr<prometheus::Registry> registry);
  ~Server();

  // Binds the ports, warms the model up, then reports SERVING.
  absl::Status Start();
  // Health NOT_SERVING, refuse new work, let accepted work finish within
  // the drain timeout, stop the batcher. Idempotent.
  void Shutdown();
  // Blocks until the gRPC server has shut down.
  void Wait();

  int port() const { return bound_port_; }
  int metrics_port() const;
  ServiceMetrics& metrics() { return metrics_; }

 private:
  absl::Status WarmUp();

  ServerConfig config_;
  std::unique_ptr<model::Engine> engine_;
  ServiceMetrics metrics_;
  std::unique_ptr<Batcher> batcher_;
  std::unique_ptr<InferenceServiceImpl> service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int bound_port_ = 0;
  absl::Mutex shutdown_mu_;
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_SERVER_H_
