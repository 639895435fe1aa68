// HttpServer: cpp-httplib configured for a server facing untrusted clients.
#include "service/http_server.h"

#include <sys/socket.h>

#include <atomic>
#include <chrono>

#include "absl/strings/str_cat.h"

namespace deberta::service {
namespace {

// Only SO_REUSEADDR (restarts while old connections linger in TIME_WAIT);
// cpp-httplib's default adds SO_REUSEPORT, which would let a second server
// bind the same port and take part of its traffic.
void ExclusivePortOptions(socket_t sock) {
  int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

}  // namespace

HttpServer::HttpServer(const Options& options) : options_(options) {}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(const Options& options) {
  std::unique_ptr<HttpServer> server(new HttpServer(options));
  if (options.security.tls()) {
    absl::StatusOr<std::unique_ptr<TlsIdentity>> identity = TlsIdentity::Load(options.security);
    if (!identity.ok()) return identity.status();
    server->identity_ = *std::move(identity);
    TlsIdentity* tls = server->identity_.get();
    auto https = std::make_unique<httplib::SSLServer>([tls](SSL_CTX& ctx) { return tls->Install(&ctx); });
    if (!https->is_valid()) return absl::InternalError("cannot set up the HTTPS context");
    server->http_ = std::move(https);
  } else {
    server->http_ = std::make_unique<httplib::Server>();
  }
  httplib::Server& http = *server->http_;
  const int threads = options.threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  const auto timeout = absl::ToChronoMicroseconds(options.request_timeout);
  http.set_read_timeout(timeout);
  http.set_write_timeout(timeout);
  http.set_keep_alive_timeout(std::max<time_t>(1, absl::ToInt64Seconds(options.request_timeout)));
  http.set_keep_alive_max_count(100);
  http.set_payload_max_length(options.max_body_bytes);
  http.set_socket_options(ExclusivePortOptions);
  return server;
}

HttpServer::~HttpServer() { Stop(); }

absl::Status HttpServer::Start() {
  httplib::Server& http = *http_;
  if (options_.port == 0) {
    port_ = http.bind_to_any_port(options_.address);
  } else if (http.bind_to_port(options_.address, options_.port)) {
    port_ = options_.port;
  }
  if (port_ <= 0) {
    port_ = -1;
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.address, ":", options_.port,
                                               " (is the port in use by another server?)"));
  }
  auto listening_ended = std::make_shared<std::atomic<bool>>(false);
  listener_ = std::thread([&http, listening_ended] {
    http.listen_after_bind();
    *listening_ended = true;
  });
  // Until the loop runs, stop() would be lost and Stop() would never return.
  while (!http.is_running() && !*listening_ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return absl::OkStatus();
}

void HttpServer::Stop() {
  if (!listener_.joinable()) return;
  http_->stop();
  listener_.join();
}

}  // namespace deberta::service
