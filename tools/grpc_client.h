// The channel every client command of deberta-cli talks over: --server
// (any gRPC target), --lb (a load-balancing policy, e.g. round_robin over
// a dns:/// headless-service target, so requests spread over every pod),
// TLS (--tls, --tls_ca, --tls_cert/--tls_key for mutual TLS,
// --tls_server_name) and the API key (--api_key or $DEBERTA_API_KEY).
#ifndef DEBERTA_TOOLS_GRPC_CLIENT_H_
#define DEBERTA_TOOLS_GRPC_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace deberta::tools {

// --model_name: the model every call names (empty: the server's only one).
std::string ModelNameFromFlags();

// Exits with code 2 and a message when a TLS file cannot be read.
std::shared_ptr<grpc::Channel> MakeChannel();

// Sets what every call carries: the deadline (--deadline from now) and the
// API key, when there is one.
void PrepareContext(grpc::ClientContext* context);

// Prints a failed RPC to stderr ("error: INVALID_ARGUMENT: ..."); returns
// the exit code: kExitConnection when the server could not be reached or
// did not answer in time (UNAVAILABLE, DEADLINE_EXCEEDED), else
// kExitServerError.
int ReportRpcError(const grpc::Status& status);

}  // namespace deberta::tools

#endif  // DEBERTA_TOOLS_GRPC_CLIENT_H_
