// HttpServer: an HTTP/1.1 listener (cpp-httplib, from Debian) with a fixed
// pool of worker threads, short read and keep-alive timeouts so slow or idle
// clients cannot hold the workers for long, a body size limit, and HTTPS
// (optionally requiring client certificates) when TLS is configured. The
// server's /metrics is served by one; routes are registered by the owner
// before Start().
#ifndef DEBERTA_SERVICE_HTTP_SERVER_H_
#define DEBERTA_SERVICE_HTTP_SERVER_H_

#include <httplib.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "service/security_config.h"
#include "service/tls_identity.h"

namespace deberta::service {

class HttpServer {
 public:
  struct Options {
    std::string address = "0.0.0.0";
    int port = 0;  // 0 picks a free port.
    // Each open connection holds one while it is read or kept alive.
    int threads = 8;
    // Longest a client may take to send a request, and longest an idle
    // keep-alive connection is kept.
    absl::Duration request_timeout = absl::Seconds(5);
    size_t max_body_bytes = size_t{1} << 20;
    // HTTPS when security.tls(); plain HTTP otherwise.
    SecurityConfig security;
  };

  // Reads the TLS files (an error names the flag) but does not bind yet.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Create(const Options& options);
  // Stop()s.
  ~HttpServer();

  // Where routes are registered, before Start().
  httplib::Server& routes() { return *http_; }

  // Binds (Unavailable if the port is taken: no SO_REUSEPORT) and serves on
  // a thread of its own.
  absl::Status Start();
  // Stops accepting and joins the listener thread. Idempotent; not for
  // concurrent callers (the owner's Shutdown serializes).
  void Stop();

  int port() const { return port_; }

 private:
  explicit HttpServer(const Options& options);

  const Options options_;
  std::unique_ptr<TlsIdentity> identity_;  // With TLS; outlives http_.
  std::unique_ptr<httplib::Server> http_;
  std::thread listener_;
  int port_ = -1;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_HTTP_SERVER_H_
