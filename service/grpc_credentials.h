// The gRPC port's credentials: plaintext, TLS, or mutual TLS, from gRPC's
// file-watcher certificate provider, which re-reads the certificate, key and
// client CA when they change (new connections get the new ones).
#ifndef DEBERTA_SERVICE_GRPC_CREDENTIALS_H_
#define DEBERTA_SERVICE_GRPC_CREDENTIALS_H_

#include <grpcpp/security/server_credentials.h>

#include <memory>

#include "service/security_config.h"

namespace deberta::service {

// The files are checked beforehand (TlsIdentity::Check): the provider
// itself would only log a failed read and fail handshakes.
std::shared_ptr<grpc::ServerCredentials> MakeGrpcServerCredentials(const SecurityConfig& security);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_GRPC_CREDENTIALS_H_
