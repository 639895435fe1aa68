// classify, fill-mask, info and health.
#include "tools/client_commands.h"

#include <iostream>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tools/grpc_client.h"

ABSL_FLAG(std::string, sequences, "", "client: token ids, space-separated, sequences split by ';'");
ABSL_FLAG(int, top_k, 0, "client: labels (classify) or candidates (fill-mask) to return");
ABSL_FLAG(std::string, health_service, "", "health: service name ('' = whole server)");

namespace deberta::tools {
namespace {

namespace pb = serving::v1;

bool ParseSequences(std::vector<std::vector<int>>* out) {
  for (absl::string_view part : absl::StrSplit(absl::GetFlag(FLAGS_sequences), ';', absl::SkipWhitespace())) {
    std::vector<int> ids;
    for (absl::string_view token : absl::StrSplit(part, ' ', absl::SkipWhitespace())) {
      int id;
      if (!absl::SimpleAtoi(token, &id)) {
        std::cerr << "bad token id '" << token << "'\n";
        return false;
      }
      ids.push_back(id);
    }
    out->push_back(ids);
  }
  if (out->empty()) std::cerr << "--sequences is required (e.g. --sequences=\"1 17 42 2\")\n";
  return !out->empty();
}

}  // namespace

int ClassifyCommand() {
  std::vector<std::vector<int>> sequences;
  if (!ParseSequences(&sequences)) return 2;
  pb::ClassifyRequest request;
  request.set_request_id("cli");
  request.set_top_k(absl::GetFlag(FLAGS_top_k));
  for (const auto& ids : sequences) {
    *request.add_sequences()->mutable_token_ids() = {ids.begin(), ids.end()};
  }
  pb::ClassifyResponse response;
  grpc::ClientContext context;
  auto status = pb::InferenceService::NewStub(MakeChannel())->Classify(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  for (int i = 0; i < response.results_size(); ++i) {
    std::cout << "sequence " << i << ":";
    for (const auto& l : response.results(i).labels()) {
      std::cout << "  " << l.label() << " " << l.probability();
    }
    std::cout << "\n";
  }
  return 0;
}

int FillMaskCommand() {
  std::vector<std::vector<int>> sequences;
  if (!ParseSequences(&sequences)) return 2;
  pb::FillMaskRequest request;
  request.set_request_id("cli");
  request.set_top_k(absl::GetFlag(FLAGS_top_k));
  for (const auto& ids : sequences) {
    *request.add_sequences()->mutable_sequence()->mutable_token_ids() = {ids.begin(), ids.end()};
  }
  pb::FillMaskResponse response;
  grpc::ClientContext context;
  auto status = pb::InferenceService::NewStub(MakeChannel())->FillMask(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  for (int i = 0; i < response.results_size(); ++i) {
    for (const auto& p : response.results(i).predictions()) {
      std::cout << "sequence " << i << " position " << p.position() << ":";
      for (const auto& c : p.candidates()) std::cout << "  " << c.token_id() << " " << c.probability();
      std::cout << "\n";
    }
  }
  return 0;
}

int InfoCommand() {
  pb::ModelInfo info;
  grpc::ClientContext context;
  auto status = pb::InferenceService::NewStub(MakeChannel())->GetModelInfo(&context, {}, &info);
  if (!status.ok()) return ReportRpcError(status);
  std::cout << info.DebugString();
  return 0;
}

int HealthCommand() {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(absl::GetFlag(FLAGS_health_service));
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  auto status = grpc::health::v1::Health::NewStub(MakeChannel())->Check(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()) << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

}  // namespace deberta::tools
