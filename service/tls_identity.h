// TlsIdentity: the certificate chain, private key and (for mutual TLS)
// client CA of the server's HTTPS listener, held in OpenSSL form and read
// again when the files change. Installed into an SSL_CTX, it hands every new
// handshake the current ones (OpenSSL's certificate callback), so rotated
// certificates serve new connections without a restart, as gRPC's
// file-watcher certificate provider does for the gRPC port.
#ifndef DEBERTA_SERVICE_TLS_IDENTITY_H_
#define DEBERTA_SERVICE_TLS_IDENTITY_H_

#include <openssl/ssl.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "service/file_watcher.h"
#include "service/security_config.h"

namespace deberta::service {

// Thread-safe.
class TlsIdentity {
 public:
  // Reads --tls_cert, --tls_key and --tls_client_ca (when set); an error
  // names the file and what is wrong (unreadable, not PEM, key not the
  // certificate's). Re-reads them every reload interval if they changed; a
  // reload that fails keeps the previous identity and logs why.
  static absl::StatusOr<std::unique_ptr<TlsIdentity>> Load(const SecurityConfig& security);
  // The checks of Load() alone (OK without TLS): for start-up, before any
  // port is bound.
  static absl::Status Check(const SecurityConfig& security);
  ~TlsIdentity();

  // TLS 1.2 and later, this identity on every handshake, and with a client
  // CA, a certificate it signed required of every client. `ctx` must not be
  // used after this object is gone.
  bool Install(SSL_CTX* ctx);

 private:
  struct Material;
  explicit TlsIdentity(SecurityConfig security);
  static absl::StatusOr<std::shared_ptr<const Material>> Read(const SecurityConfig& security);
  std::shared_ptr<const Material> Current() const;
  // OpenSSL's certificate callback: sets the current material on `ssl`.
  static int OnHandshake(SSL* ssl, void* self);

  const SecurityConfig security_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const Material> current_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<FileWatcher> watcher_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_TLS_IDENTITY_H_
