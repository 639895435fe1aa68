// ServerConfig: every setting of the server (ports, batcher, request
// limits, drain), and its validation. Flags become a ServerConfig in
// server_flags.h; tests build one directly.
#ifndef DEBERTA_SERVICE_SERVER_CONFIG_H_
#define DEBERTA_SERVICE_SERVER_CONFIG_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "service/batcher.h"
#include "service/inference_service.h"

namespace deberta::service {

struct ServerConfig {
  std::string listen_address = "0.0.0.0";
  int port = 50051;           // 0 picks a free port (tests).
  int metrics_port = 9464;    // 0 picks a free port; -1 disables the exposer.
  Batcher::Options batcher;
  InferenceServiceImpl::Options service;
  absl::Duration drain_timeout = absl::Seconds(20);
  int max_message_bytes = 16 << 20;

  // InvalidArgument naming the setting (by its flag) and the allowed range.
  absl::Status Validate() const;
  // One line for the start-up log: every setting and its value.
  std::string Describe() const;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_SERVER_CONFIG_H_
