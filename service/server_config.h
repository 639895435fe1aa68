// ServerConfig: every setting of the server (ports, batcher, request
// limits, drain), and its validation. Flags become a ServerConfig in
// server_flags.h; tests build one directly.
#ifndef DEBERTA_SERVICE_SERVER_CONFIG_H_
#define DEBERTA_SERVICE_SERVER_CONFIG_H_

#include <iostream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "service/access_log.h"
#include "service/batcher.h"
#include "service/inference_service.h"
#include "service/models/models.h"
#include "service/security_config.h"

namespace deberta::service {

// Which models the server serves and how they change (docs/models.md).
struct ModelsConfig {
  // A folder of models (one subfolder each); empty: the one model given to
  // the Server (--model).
  std::string repository;
  // The name of the one model of --model (empty: its folder's name).
  std::string model_name;
  ModelControl control = ModelControl::kNone;
  absl::Duration poll_interval = absl::Seconds(15);
  // Loads that would take the models' estimated memory past this are
  // refused. 0: no limit.
  int64_t memory_limit_bytes = 0;
  // Allow the models' CPU threads to add up to more than the cores.
  bool allow_thread_oversubscription = false;
  // Keys that may load and unload models (required with explicit control).
  std::string admin_api_keys_file;
  // Every repository model's engine settings and replicas unless its
  // serving.json says otherwise (--dtype, --device, --threads, ...).
  model::EngineOptions engine;
  int replicas = 1;
  // CPU cores the models divide between them (the resolved --threads).
  int cpu_cores = 1;
};

struct ServerConfig {
  std::string listen_address = "0.0.0.0";
  int port = 50051;           // 0 picks a free port (tests). Never shared: a
                              // second server on a port in use fails to start.
  int metrics_port = 9464;    // 0 picks a free port; -1 disables the exposer.
  // HTTP/JSON API (json_api.h): -1 off, 0 a free port.
  int http_port = -1;
  int http_threads = 16;
  // TEI's routes at the root of the HTTP port too (/predict, /rerank, ...),
  // as well as under /tei (service/protocols/tei_http.h).
  bool tei_compatible_routes = false;
  // Where /metrics listens; empty: listen_address.
  std::string metrics_listen_address;
  // Threads serving /metrics; each HTTP connection holds one while open, so
  // slow or idle clients take them (with metrics_request_timeout bounding
  // how long). Scrapes need one free.
  int metrics_threads = 8;
  absl::Duration metrics_request_timeout = absl::Seconds(5);
  Batcher::Options batcher;
  InferenceServiceImpl::Options service;
  ModelsConfig models;
  absl::Duration drain_timeout = absl::Seconds(20);
  int max_message_bytes = 16 << 20;
  // gRPC connection limits. Concurrent calls on one HTTP/2 connection.
  int max_concurrent_streams = 256;
  // Connections are closed (GOAWAY) after this age, plus a grace for the
  // calls in flight: clients then reconnect and re-resolve, so replicas
  // added by a scale-out get their share of long-lived clients.
  absl::Duration max_connection_age = absl::Minutes(10);
  absl::Duration max_connection_age_grace = absl::Seconds(30);
  // Keepalive pings more often than this (without calls) are strikes; two
  // strikes close the connection.
  absl::Duration min_client_ping_interval = absl::Seconds(10);
  // Largest request metadata (headers) accepted.
  int max_metadata_bytes = 16 << 10;
  // TLS, mutual TLS and API keys (all off by default).
  SecurityConfig security;
  // One line per request (off, text or json), written to access_log_out.
  AccessLogFormat access_log = AccessLogFormat::kOff;
  std::ostream* access_log_out = &std::cout;

  // InvalidArgument naming the setting (by its flag) and the allowed range.
  absl::Status Validate() const;
  // One line for the start-up log: every setting and its value.
  std::string Describe() const;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_SERVER_CONFIG_H_
