// gRPC server credentials from SecurityConfig.
#include "service/grpc_credentials.h"

#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include "absl/time/time.h"

namespace deberta::service {

std::shared_ptr<grpc::ServerCredentials> MakeGrpcServerCredentials(const SecurityConfig& security) {
  if (!security.tls()) return grpc::InsecureServerCredentials();
  const auto refresh_seconds = static_cast<unsigned int>(absl::ToInt64Seconds(security.reload_interval));
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      security.tls_key, security.tls_cert, security.tls_client_ca, refresh_seconds);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (security.tls_client_ca.empty()) {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

}  // namespace deberta::service
