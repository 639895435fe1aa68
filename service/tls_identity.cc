// TlsIdentity: PEM files -> OpenSSL objects, swapped in on change.
#include "service/tls_identity.h"

#include <glog/logging.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "absl/strings/str_cat.h"

namespace deberta::service {

// Owns its OpenSSL objects; immutable once read, shared with handshakes in
// progress while a reload replaces it.
struct TlsIdentity::Material {
  X509* leaf = nullptr;
  STACK_OF(X509)* chain = nullptr;  // Intermediates after the leaf.
  EVP_PKEY* key = nullptr;
  X509_STORE* client_ca = nullptr;  // Null without mutual TLS.
  STACK_OF(X509_NAME)* client_ca_names = nullptr;

  ~Material() {
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
    X509_STORE_free(client_ca);
    sk_X509_NAME_pop_free(client_ca_names, X509_NAME_free);
  }
};

namespace {

// OpenSSL's last error, for a message.
std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no PEM data";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

absl::Status Bad(absl::string_view flag, const std::string& path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", path, ": ", what));
}

}  // namespace

TlsIdentity::TlsIdentity(SecurityConfig security) : security_(std::move(security)) {}

TlsIdentity::~TlsIdentity() { watcher_.reset(); }

absl::StatusOr<std::shared_ptr<const TlsIdentity::Material>> TlsIdentity::Read(const SecurityConfig& security) {
  auto material = std::make_shared<Material>();
  {
    BIO* bio = BIO_new_file(security.tls_cert.c_str(), "r");
    if (bio == nullptr) return Bad("tls_cert", security.tls_cert, "cannot be read");
    material->leaf = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    material->chain = sk_X509_new_null();
    while (X509* next = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) sk_X509_push(material->chain, next);
    ERR_clear_error();  // The loop ends on "no start line".
    BIO_free(bio);
    if (material->leaf == nullptr) return Bad("tls_cert", security.tls_cert, "holds no PEM certificate");
  }
  {
    BIO* bio = BIO_new_file(security.tls_key.c_str(), "r");
    if (bio == nullptr) return Bad("tls_key", security.tls_key, "cannot be read");
    material->key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (material->key == nullptr) return Bad("tls_key", security.tls_key, OpenSslError());
    if (X509_check_private_key(material->leaf, material->key) != 1) {
      ERR_clear_error();
      return Bad("tls_key", security.tls_key, absl::StrCat("is not the key of ", security.tls_cert));
    }
  }
  if (!security.tls_client_ca.empty()) {
    material->client_ca = X509_STORE_new();
    if (X509_STORE_load_locations(material->client_ca, security.tls_client_ca.c_str(), nullptr) != 1) {
      return Bad("tls_client_ca", security.tls_client_ca, OpenSslError());
    }
    material->client_ca_names = SSL_load_client_CA_file(security.tls_client_ca.c_str());
    ERR_clear_error();
  }
  return std::shared_ptr<const Material>(std::move(material));
}

absl::StatusOr<std::unique_ptr<TlsIdentity>> TlsIdentity::Load(const SecurityConfig& security) {
  absl::StatusOr<std::shared_ptr<const Material>> material = Read(security);
  if (!material.ok()) return material.status();
  std::unique_ptr<TlsIdentity> identity(new TlsIdentity(security));
  identity->current_ = *std::move(material);
  std::vector<std::string> files = {security.tls_cert, security.tls_key};
  if (!security.tls_client_ca.empty()) files.push_back(security.tls_client_ca);
  TlsIdentity* self = identity.get();
  identity->watcher_ = std::make_unique<FileWatcher>(std::move(files), security.reload_interval, [self] {
    absl::StatusOr<std::shared_ptr<const Material>> fresh = Read(self->security_);
    if (!fresh.ok()) {
      LOG(WARNING) << "HTTPS: " << fresh.status().message() << "; keeping the previous certificate";
      return;
    }
    LOG(INFO) << "HTTPS: certificate, key and client CA reloaded";
    absl::MutexLock lock(&self->mu_);
    self->current_ = *std::move(fresh);
  });
  return identity;
}

absl::Status TlsIdentity::Check(const SecurityConfig& security) {
  if (!security.tls()) return absl::OkStatus();
  return Read(security).status();
}

std::shared_ptr<const TlsIdentity::Material> TlsIdentity::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

int TlsIdentity::OnHandshake(SSL* ssl, void* self) {
  const std::shared_ptr<const Material> m = static_cast<TlsIdentity*>(self)->Current();
  // SSL_use_* and SSL_add1_* take their own references.
  if (SSL_use_certificate(ssl, m->leaf) != 1 || SSL_use_PrivateKey(ssl, m->key) != 1) return 0;
  SSL_clear_chain_certs(ssl);
  for (int i = 0; i < sk_X509_num(m->chain); ++i) {
    if (SSL_add1_chain_cert(ssl, sk_X509_value(m->chain, i)) != 1) return 0;
  }
  if (m->client_ca != nullptr) {
    if (SSL_set1_verify_cert_store(ssl, m->client_ca) != 1) return 0;
    if (m->client_ca_names != nullptr) SSL_set_client_CA_list(ssl, SSL_dup_CA_list(m->client_ca_names));
  }
  return 1;
}

bool TlsIdentity::Install(SSL_CTX* ctx) {
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_cert_cb(ctx, &TlsIdentity::OnHandshake, this);
  if (!security_.tls_client_ca.empty()) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return true;
}

}  // namespace deberta::service
