// Server start-up and shutdown order.
#include "service/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/impl/server_builder_plugin.h>
#include <grpcpp/server_builder.h>
#include <glog/logging.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "service/grpc_credentials.h"
#include "service/metrics_endpoint.h"
#include "service/protocols/http_protocols.h"
#include "service/protocols/openapi.h"
#include "service/tls_identity.h"

namespace deberta::service {
namespace {

// A duration as a gRPC channel argument (int milliseconds).
int ToMillis(absl::Duration d) {
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(d), INT32_MAX));
}

// Removes gRPC's reflection plugin from one server (the plugin, once
// initialized, is added to every ServerBuilder of the process).
class WithoutReflection : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    plugins->erase(std::remove_if(plugins->begin(), plugins->end(),
                                  [](const auto& plugin) {
                                    return dynamic_cast<grpc::reflection::ProtoServerReflectionPlugin*>(plugin.get()) !=
                                           nullptr;
                                  }),
                   plugins->end());
  }
};

// An HTTP server for `options` with the routes `add_routes` registers,
// bound and serving; `what` names it in errors.
absl::StatusOr<std::unique_ptr<HttpServer>> StartHttp(const HttpServer::Options& options,
                                                      const std::function<void(httplib::Server&)>& add_routes,
                                                      absl::string_view what) {
  absl::StatusOr<std::unique_ptr<HttpServer>> http = HttpServer::Create(options);
  if (!http.ok()) return http.status();
  add_routes((*http)->routes());
  if (absl::Status s = (*http)->Start(); !s.ok()) return absl::UnavailableError(absl::StrCat(what, ": ", s.message()));
  return http;
}

}  // namespace

namespace {

std::vector<std::unique_ptr<model::Engine>> OneEngine(std::unique_ptr<model::Engine> engine) {
  std::vector<std::unique_ptr<model::Engine>> engines;
  engines.push_back(std::move(engine));
  return engines;
}

Models::Options ModelsOptions(const ServerConfig& config) {
  const ModelsConfig& models = config.models;
  Models::Options options;
  options.repository = models.repository;
  options.control = models.control;
  options.poll_interval = models.poll_interval;
  options.defaults.engine = models.engine;
  options.defaults.replicas = models.replicas;
  options.defaults.batcher = config.batcher;
  options.defaults.requests = config.service.requests;
  options.default_tokens = config.service.special_tokens;
  options.server_version = config.service.server_version;
  options.memory_limit_bytes = models.memory_limit_bytes;
  options.cpu_cores = models.cpu_cores;
  options.allow_thread_oversubscription = models.allow_thread_oversubscription;
  return options;
}

}  // namespace

Server::Server(ServerConfig config, std::vector<std::unique_ptr<model::Engine>> engines,
               std::shared_ptr<prometheus::Registry> registry, std::unique_ptr<model::Tokenizer> tokenizer)
    : config_(std::move(config)),
      engines_(std::move(engines)),
      tokenizer_(std::move(tokenizer)),
      metrics_(registry, {}, ServiceMetrics::Scope::kServerCalls),
      models_(std::make_unique<Models>(ModelsOptions(config_), nullptr, registry)) {}

Server::Server(ServerConfig config, std::unique_ptr<model::Engine> engine,
               std::shared_ptr<prometheus::Registry> registry, std::unique_ptr<model::Tokenizer> tokenizer)
    : Server(std::move(config), OneEngine(std::move(engine)), std::move(registry), std::move(tokenizer)) {}

Server::Server(ServerConfig config, EngineFactory create, std::shared_ptr<prometheus::Registry> registry)
    : config_(std::move(config)),
      metrics_(registry, {}, ServiceMetrics::Scope::kServerCalls),
      models_(std::make_unique<Models>(ModelsOptions(config_), std::move(create), registry)) {}

Server::~Server() { Shutdown(); }

int Server::metrics_port() const { return metrics_http_ ? metrics_http_->port() : -1; }

absl::Status Server::Start() {
  if (absl::Status s = config_.Validate(); !s.ok()) return s;
  if (config_.models.repository.empty() && (engines_.empty() || engines_.front() == nullptr)) {
    return absl::InvalidArgumentError("the server has no engine");
  }
  const SecurityConfig& security = config_.security;
  if (absl::Status s = TlsIdentity::Check(security); !s.ok()) return s;
  if (security.api_keys()) {
    absl::StatusOr<std::unique_ptr<ApiKeys>> keys = ApiKeys::Load(security.api_keys_file, security.reload_interval);
    if (!keys.ok()) return keys.status();
    api_keys_ = *std::move(keys);
  }
  if (!config_.models.admin_api_keys_file.empty()) {
    absl::StatusOr<std::unique_ptr<ApiKeys>> keys =
        ApiKeys::Load(config_.models.admin_api_keys_file, security.reload_interval);
    if (!keys.ok()) return keys.status();
    admin_keys_ = *std::move(keys);
  }
  if (config_.access_log != AccessLogFormat::kOff) {
    access_log_ = std::make_unique<AccessLog>(config_.access_log, config_.access_log_out);
  }
  metrics_.SetModelReady(false);
  metrics_.SetDraining(false);
  if (absl::Status s = StartMetrics(); !s.ok()) return s;

  InferenceServiceImpl::Borrowed borrowed;
  borrowed.api_keys = api_keys_.get();
  borrowed.admin_keys = admin_keys_.get();
  borrowed.access_log = access_log_.get();
  borrowed.metrics = &metrics_;
  service_ = std::make_unique<InferenceServiceImpl>(models_.get(), config_.service, borrowed);
  if (absl::Status s = StartGrpc(); !s.ok()) return s;
  if (absl::Status s = StartJsonApi(); !s.ok()) return s;

  auto* health = grpc_server_->GetHealthCheckService();
  health->SetServingStatus(false);  // NOT_SERVING until every model is warmed up.
  health->SetServingStatus(deberta::serving::v1::InferenceService::service_full_name(), false);
  models_->SetReadinessListener([this](const std::string& model, bool ready) { OnReadinessChange(model, ready); });
  // Each model's executor threads initialize its engines and warm them up;
  // until then its calls are answered UNAVAILABLE.
  if (absl::Status s = LoadModels(); !s.ok()) return s;
  models_->StartPolling();
  return absl::OkStatus();
}

absl::Status Server::LoadModels() {
  if (!config_.models.repository.empty()) return models_->LoadRepository();
  const model::ModelInfo& info = engines_.front()->info();
  ServedModel::Options options;
  options.name = config_.models.model_name.empty() ? info.name : config_.models.model_name;
  options.batcher = config_.batcher;
  options.requests = config_.service.requests;
  options.server_version = config_.service.server_version;
  LoadedModel loaded;
  loaded.engines = std::move(engines_);
  loaded.tokenizer = std::move(tokenizer_);
  loaded.special_tokens = config_.service.special_tokens;
  return models_->AddLoaded(options, std::move(loaded));
}

void Server::OnReadinessChange(const std::string& model, bool ready) {
  if (grpc_server_ == nullptr) return;
  auto* health = grpc_server_->GetHealthCheckService();
  health->SetServingStatus(model, ready);
  if (ready) {
    for (const ModelStatusInfo& status : models_->List()) {
      if (status.name == model) {
        metrics_.SetBuildInfo({{"version", config_.service.server_version},
                               {"model", status.name},
                               {"device", status.device},
                               {"dtype", status.dtype}});
      }
    }
  }
  // The server is ready when every model it knows is. (The overload
  // without a name would set every service, each model's included.)
  const bool all_ready = models_->AllReady();
  health->SetServingStatus("", all_ready);
  health->SetServingStatus(deberta::serving::v1::InferenceService::service_full_name(), all_ready);
  metrics_.SetModelReady(all_ready);
}

absl::Status Server::StartMetrics() {
  if (config_.metrics_port < 0) return absl::OkStatus();
  HttpServer::Options options;
  options.address = config_.metrics_listen_address.empty() ? config_.listen_address : config_.metrics_listen_address;
  options.port = config_.metrics_port;
  // Every open connection holds a thread: enough of them, and a short
  // request timeout, keep slow or idle clients from starving the scrapes.
  options.threads = config_.metrics_threads;
  options.request_timeout = config_.metrics_request_timeout;
  options.max_body_bytes = 4096;  // GET only.
  options.security = config_.security;
  const ApiKeys* keys = config_.security.metrics_without_api_key ? nullptr : api_keys_.get();
  absl::StatusOr<std::unique_ptr<HttpServer>> http = StartHttp(
      options, [&](httplib::Server& routes) { AddMetricsRoute(routes, metrics_.registry(), keys); }, "/metrics");
  if (!http.ok()) return http.status();
  metrics_http_ = *std::move(http);
  return absl::OkStatus();
}

absl::Status Server::StartJsonApi() {
  if (config_.http_port < 0) return absl::OkStatus();
  HttpServer::Options options;
  options.address = config_.listen_address;
  options.port = config_.http_port;
  options.threads = config_.http_threads;
  options.request_timeout = config_.metrics_request_timeout;  // Reading a request; not its compute.
  options.max_body_bytes = static_cast<size_t>(config_.max_message_bytes);
  options.security = config_.security;
  OpenApiOptions document;
  document.server_version = config_.service.server_version;
  document.api_keys = api_keys_ != nullptr;
  HttpProtocolOptions protocols;
  protocols.tei_compatible_routes = config_.tei_compatible_routes;
  protocols.server_version = config_.service.server_version;
  document.protocols = protocols;
  absl::StatusOr<std::string> openapi = MakeOpenApiDocument(document);
  if (!openapi.ok()) return openapi.status();
  absl::StatusOr<std::unique_ptr<HttpServer>> http = StartHttp(
      options,
      [&](httplib::Server& routes) {
        AddHttpProtocols(routes, in_process_channel_, *std::move(openapi), protocols);
      },
      "HTTP API");
  if (!http.ok()) return http.status();
  json_http_ = *std::move(http);
  return absl::OkStatus();
}

absl::Status Server::StartGrpc() {
  const SecurityConfig& security = config_.security;
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  if (api_keys_ != nullptr && !security.reflection_without_api_key) {
    // gRPC's reflection service cannot check a key: with keys it is off
    // unless asked for.
    builder.SetOption(std::make_unique<WithoutReflection>());
  }
  builder.AddListeningPort(absl::StrCat(config_.listen_address, ":", config_.port),
                           MakeGrpcServerCredentials(security), &bound_port_);
  builder.RegisterService(service_.get());
  // The adapters' threads: as many as the HTTP adapters get, and a queue as
  // long as one endpoint's in the batcher.
  grpc_adapters_ = std::make_unique<GrpcAdapterBackend>(config_.http_threads, config_.batcher.max_enqueued_tasks);
  TeiGrpcLimits tei_limits;
  tei_limits.max_concurrent_requests = static_cast<uint32_t>(config_.batcher.max_enqueued_tasks);
  tei_limits.max_batch_tokens = static_cast<uint32_t>(config_.batcher.max_batch_tokens);
  tei_limits.max_batch_requests = static_cast<uint32_t>(config_.batcher.max_batch_size);
  tei_limits.max_client_batch_size = static_cast<uint32_t>(config_.service.requests.max_sequences_per_request);
  tei_grpc_ = std::make_unique<TeiGrpcServices>(grpc_adapters_.get(), tei_limits);
  for (grpc::Service* service : tei_grpc_->services()) builder.RegisterService(service);
  kserve_grpc_ = std::make_unique<KserveGrpcService>(grpc_adapters_.get(), config_.service.server_version);
  builder.RegisterService(kserve_grpc_->service());
  builder.SetMaxReceiveMessageSize(config_.max_message_bytes);
  // gRPC sets SO_REUSEPORT by default: a second server on the same port
  // would start and take part of the traffic. Fail to bind instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, config_.max_concurrent_streams);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, ToMillis(config_.max_connection_age));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, ToMillis(config_.max_connection_age_grace));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             ToMillis(config_.min_client_ping_interval));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, config_.max_metadata_bytes);
  grpc_server_ = builder.BuildAndStart();
  if (!grpc_server_ || bound_port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config_.listen_address, ":", config_.port,
                                               " (is the port in use by another server?)"));
  }
  // One in-process channel for every adapter, HTTP and gRPC.
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  in_process_channel_ = grpc_server_->InProcessChannel(args);
  grpc_adapters_->SetChannel(in_process_channel_);
  return absl::OkStatus();
}

void Server::Shutdown() {
  absl::MutexLock lock(&shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  if (grpc_server_) {
    grpc_server_->GetHealthCheckService()->Shutdown();  // NOT_SERVING, sticky.
    if (service_) service_->StopAccepting();             // New work: Unavailable.
  }
  metrics_.SetDraining(true);
  const absl::Time deadline = absl::Now() + config_.drain_timeout;
  models_->StartDraining();  // Run queued work without waiting to fill.
  // Accepted calls finish while the server still answers new ones, with
  // Unavailable (retryable: clients go to another replica). gRPC's own
  // shutdown would answer them Cancelled instead.
  if (service_) {
    LOG(INFO) << "draining: health NOT_SERVING, new calls UNAVAILABLE; waiting up to "
              << config_.drain_timeout << " for accepted calls";
    if (service_->AwaitNoOpenCalls(deadline)) {
      LOG(INFO) << "drain: every accepted call answered";
    } else {
      LOG(WARNING) << "drain: timeout reached with calls still open; cancelling them";
    }
  }
  if (grpc_server_) {
    // Calls still open past the drain deadline are cancelled now, and the
    // batcher drops their queued tasks before compute.
    grpc_server_->Shutdown(absl::ToChronoTime(deadline));
  }
  models_->Stop();
  metrics_.SetModelReady(false);
  if (json_http_) json_http_->Stop();
  if (metrics_http_) metrics_http_->Stop();
  LOG(INFO) << "drain: done";
}

void Server::Wait() {
  if (grpc_server_) grpc_server_->Wait();
  // No adapter call is left: their stubs' channel goes before the server.
  if (grpc_adapters_) grpc_adapters_->SetChannel(nullptr);
}

}  // namespace deberta::service
