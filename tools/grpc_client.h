// The channel every client command of deberta-cli talks over: --server
// (any gRPC target) and --lb (a load-balancing policy, e.g. round_robin over
// a dns:/// headless-service target, so requests spread over every pod).
#ifndef DEBERTA_TOOLS_GRPC_CLIENT_H_
#define DEBERTA_TOOLS_GRPC_CLIENT_H_

#include <grpcpp/grpcpp.h>

#include <memory>

namespace deberta::tools {

std::shared_ptr<grpc::Channel> MakeChannel();

// Prints a failed RPC to stderr; returns the exit code 1.
int ReportRpcError(const grpc::Status& status);

}  // namespace deberta::tools

#endif  // DEBERTA_TOOLS_GRPC_CLIENT_H_
