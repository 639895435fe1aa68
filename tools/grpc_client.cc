// Client channel from --server and --lb.
#include "tools/grpc_client.h"

#include <iostream>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, server, "localhost:50051", "client: gRPC target of the server");
ABSL_FLAG(std::string, lb, "", "client: load-balancing policy, e.g. round_robin over a headless service");

namespace deberta::tools {

std::shared_ptr<grpc::Channel> MakeChannel() {
  grpc::ChannelArguments args;
  if (!absl::GetFlag(FLAGS_lb).empty()) args.SetLoadBalancingPolicyName(absl::GetFlag(FLAGS_lb));
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials(), args);
}

int ReportRpcError(const grpc::Status& status) {
  std::cerr << "error: " << status.error_code() << " " << status.error_message() << "\n";
  return 1;
}

}  // namespace deberta::tools
