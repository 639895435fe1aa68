// Client channel from --server, --lb and the TLS flags; the API key.
#include "tools/grpc_client.h"

#include <cstdlib>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/status/status.h"
#include "model/read_file.h"
#include "tools/cli_help.h"

ABSL_FLAG(std::string, server, "localhost:50051", "client: gRPC target of the server");
ABSL_FLAG(std::string, model_name, "",
          "client: the model to call, by its name on a server of several models (models lists them); "
          "load-model, unload-model: the model to load or unload");
ABSL_FLAG(std::string, lb, "", "client: load-balancing policy, e.g. round_robin over a headless service");
ABSL_FLAG(bool, tls, false, "client: connect over TLS, trusting the system's CAs (implied by the other --tls_*)");
ABSL_FLAG(std::string, tls_ca, "", "client: PEM CA bundle that signed the server's certificate");
ABSL_FLAG(std::string, tls_cert, "", "client: PEM client certificate, for servers that require mutual TLS");
ABSL_FLAG(std::string, tls_key, "", "client: PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_server_name, "",
          "client: name to verify in the server's certificate, when it differs from --server's host");
ABSL_FLAG(absl::Duration, deadline, absl::Seconds(30), "client: deadline of each call");
ABSL_FLAG(std::string, api_key, "",
          "client: API key, sent as 'authorization: Bearer <key>' (default: $DEBERTA_API_KEY)");

namespace deberta::tools {
namespace {

std::string ReadPemOrExit(const char* flag, const std::string& path) {
  if (path.empty()) return "";
  absl::StatusOr<std::string> text = model::ReadFileToString(path);
  if (!text.ok()) {
    std::cerr << "error: --" << flag << ": " << text.status().message() << "\n";
    std::exit(kExitUsage);
  }
  return *text;
}

std::shared_ptr<grpc::ChannelCredentials> Credentials() {
  const bool tls = absl::GetFlag(FLAGS_tls) || !absl::GetFlag(FLAGS_tls_ca).empty() ||
                   !absl::GetFlag(FLAGS_tls_cert).empty() || !absl::GetFlag(FLAGS_tls_server_name).empty();
  if (!tls) return grpc::InsecureChannelCredentials();
  if (absl::GetFlag(FLAGS_tls_cert).empty() != absl::GetFlag(FLAGS_tls_key).empty()) {
    std::cerr << "error: --tls_cert and --tls_key go together\n";
    std::exit(kExitUsage);
  }
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = ReadPemOrExit("tls_ca", absl::GetFlag(FLAGS_tls_ca));  // Empty: the system's.
  options.pem_cert_chain = ReadPemOrExit("tls_cert", absl::GetFlag(FLAGS_tls_cert));
  options.pem_private_key = ReadPemOrExit("tls_key", absl::GetFlag(FLAGS_tls_key));
  return grpc::SslCredentials(options);
}

std::string ApiKey() {
  std::string key = absl::GetFlag(FLAGS_api_key);
  if (key.empty()) {
    const char* env = std::getenv("DEBERTA_API_KEY");
    if (env != nullptr) key = env;
  }
  return key;
}

}  // namespace

std::string ModelNameFromFlags() { return absl::GetFlag(FLAGS_model_name); }

std::shared_ptr<grpc::Channel> MakeChannel() {
  grpc::ChannelArguments args;
  if (!absl::GetFlag(FLAGS_lb).empty()) args.SetLoadBalancingPolicyName(absl::GetFlag(FLAGS_lb));
  if (!absl::GetFlag(FLAGS_tls_server_name).empty()) {
    args.SetSslTargetNameOverride(absl::GetFlag(FLAGS_tls_server_name));
  }
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(absl::GetFlag(FLAGS_server), Credentials(), args);
}

void PrepareContext(grpc::ClientContext* context) {
  context->set_deadline(absl::ToChronoTime(absl::Now() + absl::GetFlag(FLAGS_deadline)));
  static const std::string* const authorization = [] {
    const std::string key = ApiKey();
    return key.empty() ? nullptr : new std::string(absl::StrCat("Bearer ", key));
  }();
  if (authorization != nullptr) context->AddMetadata("authorization", *authorization);
}

int ReportRpcError(const grpc::Status& status) {
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  std::cerr << "error: " << absl::StatusCodeToString(code) << ": " << status.error_message() << "\n";
  const bool unreachable = code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded;
  return unreachable ? kExitConnection : kExitServerError;
}

}  // namespace deberta::tools
