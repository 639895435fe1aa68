// SecurityConfig: TLS, mutual TLS and API keys, for gRPC and /metrics.
// Everything is off by default (plaintext, no keys), as on a loopback or a
// service mesh that terminates TLS itself.
#ifndef DEBERTA_SERVICE_SECURITY_CONFIG_H_
#define DEBERTA_SERVICE_SECURITY_CONFIG_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace deberta::service {

struct SecurityConfig {
  // PEM files. With a certificate and key the server speaks TLS only; with
  // a client CA too, clients must present a certificate it signed (mTLS).
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  // One key per line; when set, every InferenceService call must carry
  // `authorization: Bearer <key>`. Health is always exempt.
  std::string api_keys_file;
  // With API keys: serve reflection (off otherwise, as gRPC's reflection
  // service cannot check a key) and /metrics without a key.
  bool reflection_without_api_key = false;
  bool metrics_without_api_key = false;
  // How often the certificate, key, CA and keys files are checked for
  // changes; a change takes effect for new connections and calls.
  absl::Duration reload_interval = absl::Seconds(10);

  bool tls() const { return !tls_cert.empty(); }
  bool api_keys() const { return !api_keys_file.empty(); }
  // Settings that go together are set together; files are checked by the
  // server when it starts.
  absl::Status Validate() const;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_SECURITY_CONFIG_H_
