// Server start-up and shutdown order.
#include "service/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server_builder.h>


#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace deberta::service {

absl::Status ServerConfig::Validate() const {
  if (port < 0 || port > 65535) return absl::InvalidArgumentError(absl::StrCat("--port ", port, " is out of range"));
  if (metrics_port < -1 || metrics_port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("--metrics_port ", metrics_port, " is out of range"));
  }
  if (batcher.max_batch_size < 1) return absl::InvalidArgumentError("--max_batch_size must be >= 1");
  if (batcher.max_batch_tokens < 1) return absl::InvalidArgumentError("--max_batch_tokens must be >= 1");
  if (batcher.max_enqueued_tasks < 1) return absl::InvalidArgumentError("--max_queue_size must be >= 1");
  if (batcher.batch_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--batch_timeout must be >= 0");
  }
  if (max_message_bytes < 1) return absl::InvalidArgumentError("--max_message_bytes must be >= 1");
  if (service.max_sequences_per_request < 1) {
    return absl::InvalidArgumentError("--max_sequences_per_request must be >= 1");
  }
  return absl::OkStatus();
}

Server::Server(ServerConfig config, std::unique_ptr<model::Engine> engine,
               std::shared_ptr<prometheus::Registry> registry)
    : config_(std::move(config)), engine_(std::move(engine)), metrics_(std::move(registry)) {}

Server::~Server() { Shutdown(); }

int Server::metrics_port() const {
  if (!exposer_) return -1;
  auto ports = exposer_->GetListeningPorts();
  return ports.empty() ? -1 : ports.front();
}

absl::Status Server::WarmUp() {
  // One small forward per endpoint, on the batcher's thread where every
  // later batch runs: allocates the first buffers, loads kernels and starts
  // that thread's intra-op workers before the first request.
  absl::Status status;
  absl::Notification done;
  batcher_->RunOnExecutor([this, &status, &done] {
    model::Sequence sequence;
    sequence.token_ids.assign(std::min<int64_t>(8, engine_->info().max_sequence_length), 1);
    if (engine_->info().has_classifier) {
      if (auto r = engine_->Classify({sequence}); !r.ok()) status = r.status();
    }
    if (status.ok() && engine_->info().has_mlm_head) {
      model::MaskedSequence masked{sequence, {0}, 1};
      if (auto r = engine_->FillMask({masked}); !r.ok()) status = r.status();
    }
    done.Notify();
  });
  done.WaitForNotification();
  return status;
}

absl::Status Server::Start() {
  if (absl::Status s = config_.Validate(); !s.ok()) return s;
  const model::ModelInfo& info = engine_->info();
  metrics_.SetBuildInfo({{"version", config_.service.server_version},
                         {"model", info.name},
                         {"device", info.device},
                         {"dtype", info.dtype}});
  metrics_.SetBatcherLimits(config_.batcher.max_batch_size, config_.batcher.max_batch_tokens,
                            config_.batcher.max_enqueued_tasks);
  metrics_.SetModelReady(false);
  metrics_.SetDraining(false);
  if (config_.metrics_port >= 0) {
    // civetweb binds all interfaces for a bare port; "0.0.0.0:N" fails there.
    const std::string bind = config_.listen_address == "0.0.0.0"
                                 ? absl::StrCat(config_.metrics_port)
                                 : absl::StrCat(config_.listen_address, ":", config_.metrics_port);
    try {
      exposer_ = std::make_unique<prometheus::Exposer>(bind);
    } catch (const std::exception& e) {
      // prometheus-cpp reports a failed bind (port taken) by throwing.
      return absl::UnavailableError(absl::StrCat("cannot serve /metrics on ", bind, ": ", e.what()));
    }
    exposer_->RegisterCollectable(metrics_.registry());
  }

  batcher_ = std::make_unique<Batcher>(config_.batcher, engine_.get(), RealClock::Get(), &metrics_);
  service_ = std::make_unique<InferenceServiceImpl>(info, config_.service, batcher_.get(), &metrics_);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat(config_.listen_address, ":", config_.port),
                           grpc::InsecureServerCredentials(), &bound_port_);
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(config_.max_message_bytes);
  grpc_server_ = builder.BuildAndStart();
  if (!grpc_server_ || bound_port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config_.listen_address, ":", config_.port));
  }
  auto* health = grpc_server_->GetHealthCheckService();
  const std::string service_name = deberta::serving::v1::InferenceService::service_full_name();
  health->SetServingStatus(false);  // NOT_SERVING until warmed up.
  health->SetServingStatus(service_name, false);
  if (absl::Status s = WarmUp(); !s.ok()) return s;
  health->SetServingStatus(true);
  health->SetServingStatus(service_name, true);
  metrics_.SetModelReady(true);
  return absl::OkStatus();
}

void Server::Shutdown() {
  {
    absl::MutexLock lock(&shutdown_mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  if (grpc_server_) {
    grpc_server_->GetHealthCheckService()->Shutdown();  // NOT_SERVING, sticky.
    if (service_) service_->StopAccepting();             // New work: Unavailable.
  }
  metrics_.SetDraining(true);
  const absl::Time deadline = absl::Now() + config_.drain_timeout;
  if (batcher_) batcher_->StartDraining();  // Run queued work without waiting to fill.
  // Accepted calls finish while the server still answers new ones, with
  // Unavailable (retryable: clients go to another replica). gRPC's own
  // shutdown would answer them Cancelled instead.
  if (service_) service_->AwaitNoOpenCalls(deadline);
  if (grpc_server_) {
    // Calls still open past the drain deadline are cancelled now, and the
    // batcher drops their queued tasks before compute.
    grpc_server_->Shutdown(absl::ToChronoTime(deadline));
  }
  if (batcher_) batcher_->Stop();
  metrics_.SetModelReady(false);
}

void Server::Wait() {
  if (grpc_server_) grpc_server_->Wait();
}

}  // namespace deberta::service
