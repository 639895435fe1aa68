// Server flags -> ServerConfig; each flag's default from ServerConfig's.
#include "service/server_flags.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "model/demo_model.h"
#include "model/special_tokens.h"

namespace {

// Every flag's default is the default of the setting it fills, so that a
// default is written once (in its struct) and --help shows it.
const deberta::service::ServerConfig& Defaults() {
  static const auto* defaults = new deberta::service::ServerConfig();
  return *defaults;
}

}  // namespace

ABSL_FLAG(std::string, listen_address, Defaults().listen_address, "Address to listen on");
ABSL_FLAG(int, port, Defaults().port, "gRPC port (0 = pick a free one)");
ABSL_FLAG(int, http_port, Defaults().http_port, "HTTP/JSON API port: POST /v1/classify, ... (-1 = off, 0 = pick a free one)");
ABSL_FLAG(int, http_threads, Defaults().http_threads, "Threads serving the HTTP/JSON API (each open connection holds one)");
ABSL_FLAG(bool, tei_compatible_routes, Defaults().tei_compatible_routes,
          "text-embeddings-inference's routes (/predict, /rerank, /tokenize, /decode, /info, /health) at the root of "
          "the HTTP port too, as well as under /tei");
ABSL_FLAG(int, metrics_port, Defaults().metrics_port,
          "Prometheus /metrics port (-1 = off; 9464, not Prometheus's own 9090)");
ABSL_FLAG(std::string, metrics_listen_address, Defaults().metrics_listen_address, "Address /metrics listens on ('' = --listen_address)");
ABSL_FLAG(int, metrics_threads, Defaults().metrics_threads, "Threads serving /metrics (each open HTTP connection holds one)");
ABSL_FLAG(absl::Duration, metrics_request_timeout, Defaults().metrics_request_timeout,
          "Longest a /metrics client may take to send its request");
ABSL_FLAG(int, max_concurrent_streams, Defaults().max_concurrent_streams, "Most concurrent calls on one gRPC connection");
ABSL_FLAG(absl::Duration, max_connection_age, Defaults().max_connection_age,
          "gRPC connections are closed after this age, so clients re-resolve and spread to new replicas");
ABSL_FLAG(absl::Duration, max_connection_age_grace, Defaults().max_connection_age_grace,
          "Time calls in flight get after a connection reaches its maximum age");
ABSL_FLAG(absl::Duration, min_client_ping_interval, Defaults().min_client_ping_interval,
          "Clients' keepalive pings more often than this are refused (and then the connection)");
ABSL_FLAG(int, max_metadata_bytes, Defaults().max_metadata_bytes, "Largest request metadata (headers) accepted");
ABSL_FLAG(std::string, tls_cert, Defaults().security.tls_cert, "PEM certificate chain: serve gRPC and /metrics over TLS only");
ABSL_FLAG(std::string, tls_key, Defaults().security.tls_key, "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, Defaults().security.tls_client_ca,
          "PEM CA bundle: clients must present a certificate it signed (mutual TLS)");
ABSL_FLAG(std::string, api_keys_file, Defaults().security.api_keys_file,
          "File of API keys, one per line: calls need 'authorization: Bearer <key>' (health exempt)");
ABSL_FLAG(bool, reflection_without_api_key, Defaults().security.reflection_without_api_key,
          "With --api_keys_file: still serve gRPC reflection (without a key); it is off otherwise");
ABSL_FLAG(bool, metrics_without_api_key, Defaults().security.metrics_without_api_key,
          "With --api_keys_file: serve /metrics without a key (otherwise the key is the Basic-auth password)");
ABSL_FLAG(absl::Duration, credentials_reload_interval, Defaults().security.reload_interval,
          "How often TLS files and the API keys file are checked for changes");
ABSL_FLAG(std::string, access_log, deberta::service::AccessLogFormatName(Defaults().access_log),
          "One line per request on stdout: off, text or json (request id, method, code, sizes, times, peer, "
          "traceparent; token ids and text only with --log_payloads)");
ABSL_FLAG(bool, log_payloads, Defaults().service.log_payloads,
          "With --access_log: add each request (token ids and text, in protobuf's JSON mapping) to its line");
ABSL_FLAG(int64_t, max_batch_size, static_cast<int64_t>(Defaults().batcher.max_batch_size), "Most sequences per batch");
ABSL_FLAG(int64_t, max_batch_tokens, Defaults().batcher.max_batch_tokens, "Most padded tokens (sequences x longest) per batch");
ABSL_FLAG(absl::Duration, batch_timeout, Defaults().batcher.batch_timeout,
          "Longest wait for a batch to fill (0: run what is queued as soon as the model is free)");
ABSL_FLAG(std::string, batching, Defaults().batcher.length_aware ? "length_aware" : "first_come",
          "Batch formation: length_aware (similar lengths together) or first_come (arrival order)");
ABSL_FLAG(int, max_message_bytes, Defaults().max_message_bytes,
          "Largest request message; larger ones get RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_queue_size, static_cast<int64_t>(Defaults().batcher.max_enqueued_tasks), "Most queued sequences per endpoint before RESOURCE_EXHAUSTED");
ABSL_FLAG(bool, truncate, Defaults().service.requests.truncate, "Truncate over-long sequences instead of rejecting them");
ABSL_FLAG(int, max_sequences_per_request, Defaults().service.requests.max_sequences_per_request, "Most sequences in one request");
ABSL_FLAG(int, max_windows, Defaults().service.requests.max_windows,
          "Most windows one text of a long_input MODE_WINDOWS request may take (a request may ask for fewer)");
ABSL_FLAG(int64_t, max_tokens_per_request, Defaults().service.requests.max_tokens_per_request,
          "Most tokens one request may queue, every window and rerank document counted");
ABSL_FLAG(int, max_rerank_documents, Defaults().service.requests.max_rerank_documents,
          "Most documents in one Rerank request");
ABSL_FLAG(int, max_top_k, Defaults().service.requests.max_top_k, "Largest fill-mask top_k (candidates per predicted position)");
ABSL_FLAG(int64_t, max_fill_mask_logits, Defaults().service.requests.max_fill_mask_logits,
          "Most fill-mask work per request: predicted positions x vocabulary size");
ABSL_FLAG(int64_t, max_fill_mask_candidates, Defaults().service.requests.max_fill_mask_candidates,
          "Most candidates in one fill-mask answer: predicted positions x top_k");
ABSL_FLAG(absl::Duration, drain_timeout, Defaults().drain_timeout,
          "Time accepted work gets to finish on SIGTERM");
ABSL_FLAG(int, pad_token_id, deberta::model::SpecialTokens().pad, "Pad id when the checkpoint has no tokenizer files");
ABSL_FLAG(int, cls_token_id, deberta::model::SpecialTokens().cls, "CLS id when the checkpoint has no tokenizer files");
ABSL_FLAG(int, sep_token_id, deberta::model::SpecialTokens().sep, "SEP id when the checkpoint has no tokenizer files");
ABSL_FLAG(int, unk_token_id, deberta::model::SpecialTokens().unk, "UNK id when the checkpoint has no tokenizer files");
ABSL_FLAG(int, mask_token_id, deberta::model::SpecialTokens().mask, "MASK id when the checkpoint has no tokenizer files");
ABSL_FLAG(std::string, model_repository, Defaults().models.repository,
          "A folder of models, one subfolder each (name = folder), with numbered version folders and an optional "
          "serving.json (docs/models.md); instead of --model");
ABSL_FLAG(std::string, model_name, Defaults().models.model_name,
          "The name of the --model model (requests' model field, metrics); default: its folder's name");
ABSL_FLAG(std::string, model_control, deberta::service::ModelControlName(Defaults().models.control),
          "none: the repository's models stay as loaded at start; explicit: LoadModel/UnloadModel with an admin "
          "key; poll: re-read the repository every --repository_poll_interval");
ABSL_FLAG(absl::Duration, repository_poll_interval, Defaults().models.poll_interval,
          "How often --model_control=poll re-reads the repository");
ABSL_FLAG(std::string, memory_limit, "0",
          "Refuse loads that would take the models' estimated memory past this (bytes, or with K, M, G); 0: no limit");
ABSL_FLAG(bool, allow_thread_oversubscription, Defaults().models.allow_thread_oversubscription,
          "Allow the models' serving.json threads to add up to more than the machine's cores");
ABSL_FLAG(std::string, admin_api_keys_file, Defaults().models.admin_api_keys_file,
          "File of API keys (one per line) that may load and unload models; needed by --model_control=explicit");

namespace deberta::service {
namespace {

// Checks a signed flag value before it becomes a size.
absl::Status AtLeast(absl::string_view flag, int64_t value, int64_t minimum) {
  if (value >= minimum) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--", flag, " is ", value, "; it must be >= ", minimum));
}

}  // namespace

absl::StatusOr<ServerConfig> ServerConfigFromFlags(const model::EngineOptions& engine,
                                                   const model::Tokenizer* tokenizer) {
  ServerConfig config;
  config.listen_address = absl::GetFlag(FLAGS_listen_address);
  config.port = absl::GetFlag(FLAGS_port);
  config.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  config.http_port = absl::GetFlag(FLAGS_http_port);
  config.http_threads = absl::GetFlag(FLAGS_http_threads);
  config.tei_compatible_routes = absl::GetFlag(FLAGS_tei_compatible_routes);
  config.metrics_listen_address = absl::GetFlag(FLAGS_metrics_listen_address);
  config.metrics_threads = absl::GetFlag(FLAGS_metrics_threads);
  config.metrics_request_timeout = absl::GetFlag(FLAGS_metrics_request_timeout);
  config.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  config.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  config.max_connection_age_grace = absl::GetFlag(FLAGS_max_connection_age_grace);
  config.min_client_ping_interval = absl::GetFlag(FLAGS_min_client_ping_interval);
  config.max_metadata_bytes = absl::GetFlag(FLAGS_max_metadata_bytes);
  absl::StatusOr<AccessLogFormat> access_log = ParseAccessLogFormat(absl::GetFlag(FLAGS_access_log));
  if (!access_log.ok()) return access_log.status();
  config.access_log = *access_log;
  config.service.log_payloads = absl::GetFlag(FLAGS_log_payloads);
  SecurityConfig& security = config.security;
  security.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  security.tls_key = absl::GetFlag(FLAGS_tls_key);
  security.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  security.api_keys_file = absl::GetFlag(FLAGS_api_keys_file);
  security.reflection_without_api_key = absl::GetFlag(FLAGS_reflection_without_api_key);
  security.metrics_without_api_key = absl::GetFlag(FLAGS_metrics_without_api_key);
  security.reload_interval = absl::GetFlag(FLAGS_credentials_reload_interval);
  const int64_t max_batch_size = absl::GetFlag(FLAGS_max_batch_size);
  const int64_t max_queue_size = absl::GetFlag(FLAGS_max_queue_size);
  if (absl::Status s = AtLeast("max_batch_size", max_batch_size, 1); !s.ok()) return s;
  if (absl::Status s = AtLeast("max_queue_size", max_queue_size, 1); !s.ok()) return s;
  config.batcher.max_batch_size = static_cast<size_t>(max_batch_size);
  config.batcher.max_enqueued_tasks = static_cast<size_t>(max_queue_size);
  config.batcher.max_batch_tokens = absl::GetFlag(FLAGS_max_batch_tokens);
  config.batcher.batch_timeout = absl::GetFlag(FLAGS_batch_timeout);
  const std::string batching = absl::GetFlag(FLAGS_batching);
  if (batching != "length_aware" && batching != "first_come") {
    return absl::InvalidArgumentError(
        absl::StrCat("--batching is '", batching, "'; it must be length_aware or first_come"));
  }
  config.batcher.length_aware = batching == "length_aware";
  config.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  config.drain_timeout = absl::GetFlag(FLAGS_drain_timeout);
  config.service.requests.truncate = absl::GetFlag(FLAGS_truncate);
  config.service.requests.max_sequences_per_request = absl::GetFlag(FLAGS_max_sequences_per_request);
  config.service.requests.max_windows = absl::GetFlag(FLAGS_max_windows);
  config.service.requests.max_tokens_per_request = absl::GetFlag(FLAGS_max_tokens_per_request);
  config.service.requests.max_rerank_documents = absl::GetFlag(FLAGS_max_rerank_documents);
  config.service.requests.max_top_k = absl::GetFlag(FLAGS_max_top_k);
  config.service.requests.max_fill_mask_logits = absl::GetFlag(FLAGS_max_fill_mask_logits);
  config.service.requests.max_fill_mask_candidates = absl::GetFlag(FLAGS_max_fill_mask_candidates);
  config.service.server_version = DEBERTA_SERVE_VERSION;
  ModelsConfig& models = config.models;
  models.repository = absl::GetFlag(FLAGS_model_repository);
  models.model_name = absl::GetFlag(FLAGS_model_name);
  absl::StatusOr<ModelControl> control = ParseModelControl(absl::GetFlag(FLAGS_model_control));
  if (!control.ok()) return control.status();
  models.control = *control;
  models.poll_interval = absl::GetFlag(FLAGS_repository_poll_interval);
  absl::StatusOr<int64_t> memory_limit = ParseMemorySize(absl::GetFlag(FLAGS_memory_limit));
  if (!memory_limit.ok()) return absl::InvalidArgumentError(absl::StrCat("--memory_limit: ", memory_limit.status().message()));
  models.memory_limit_bytes = *memory_limit;
  models.allow_thread_oversubscription = absl::GetFlag(FLAGS_allow_thread_oversubscription);
  models.admin_api_keys_file = absl::GetFlag(FLAGS_admin_api_keys_file);
  models.engine = engine;
  const model::SpecialTokens flag_tokens{absl::GetFlag(FLAGS_pad_token_id), absl::GetFlag(FLAGS_cls_token_id),
                                         absl::GetFlag(FLAGS_sep_token_id), absl::GetFlag(FLAGS_unk_token_id),
                                         absl::GetFlag(FLAGS_mask_token_id)};
  if (!models.repository.empty()) {
    // Each model reads its own; these are for checkpoints without files.
    config.service.special_tokens = flag_tokens;
  } else if (tokenizer != nullptr) {
    config.service.special_tokens = tokenizer->special_tokens();
  } else if (engine.model == model::kDemoModelName) {
    config.service.special_tokens = {model::kDemoPadId, model::kDemoClsId, model::kDemoSepId,
                                     model::kDemoUnkId, model::kDemoMaskId};
  } else {
    absl::StatusOr<model::SpecialTokens> special = model::ReadSpecialTokens(engine.model, flag_tokens);
    if (!special.ok()) return special.status();
    config.service.special_tokens = *special;
  }
  if (absl::Status s = config.Validate(); !s.ok()) return s;
  return config;
}

}  // namespace deberta::service
