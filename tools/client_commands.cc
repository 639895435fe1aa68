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
ABSL_FLAG(std::string, text, "", "classify, fill-mask, tokenize: text instead of --sequences (fill-mask: with [MASK] in it)");
ABSL_FLAG(std::string, text_pair, "", "classify, tokenize: second text of a pair ([CLS] text [SEP] text_pair [SEP])");
ABSL_FLAG(std::string, labels, "", "zero-shot: candidate labels, comma-separated");
ABSL_FLAG(std::string, hypothesis_template, "", "zero-shot: hypothesis with {} for the label ('' = This example is {}.)");
ABSL_FLAG(bool, multi_label, false, "zero-shot: score each label on its own (entailment vs contradiction)");
ABSL_FLAG(int, max_length, 0, "classify, tokenize: truncate text to this many tokens (longest_first; 0: none)");

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

// --text (and --text_pair) as one sequence.
bool HasText() { return !absl::GetFlag(FLAGS_text).empty() || !absl::GetFlag(FLAGS_text_pair).empty(); }

void SetText(pb::Sequence* sequence) {
  sequence->set_text(absl::GetFlag(FLAGS_text));
  if (!absl::GetFlag(FLAGS_text_pair).empty()) sequence->set_text_pair(absl::GetFlag(FLAGS_text_pair));
}

pb::Truncation TruncationFromFlags() {
  return absl::GetFlag(FLAGS_max_length) > 0 ? pb::TRUNCATION_LONGEST_FIRST : pb::TRUNCATION_UNSPECIFIED;
}

}  // namespace

int ClassifyCommand() {
  pb::ClassifyRequest request;
  request.set_request_id("cli");
  request.set_top_k(absl::GetFlag(FLAGS_top_k));
  if (HasText()) {
    SetText(request.add_sequences());
    request.set_truncation(TruncationFromFlags());
    request.set_max_length(absl::GetFlag(FLAGS_max_length));
  } else {
    std::vector<std::vector<int>> sequences;
    if (!ParseSequences(&sequences)) return 2;
    for (const auto& ids : sequences) {
      *request.add_sequences()->mutable_token_ids() = {ids.begin(), ids.end()};
    }
  }
  pb::ClassifyResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
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
  pb::FillMaskRequest request;
  request.set_request_id("cli");
  request.set_top_k(absl::GetFlag(FLAGS_top_k));
  if (HasText()) {
    request.add_sequences()->mutable_sequence()->set_text(absl::GetFlag(FLAGS_text));
  } else {
    std::vector<std::vector<int>> sequences;
    if (!ParseSequences(&sequences)) return 2;
    for (const auto& ids : sequences) {
      *request.add_sequences()->mutable_sequence()->mutable_token_ids() = {ids.begin(), ids.end()};
    }
  }
  pb::FillMaskResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto status = pb::InferenceService::NewStub(MakeChannel())->FillMask(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  for (int i = 0; i < response.results_size(); ++i) {
    for (const auto& p : response.results(i).predictions()) {
      std::cout << "sequence " << i << " position " << p.position() << ":";
      for (const auto& c : p.candidates()) {
        std::cout << "  " << c.token_id();
        if (!c.token().empty()) std::cout << " '" << c.token() << "'";
        std::cout << " " << c.probability();
        if (!c.sequence().empty()) std::cout << " \"" << c.sequence() << "\"";
      }
      std::cout << "\n";
    }
  }
  return 0;
}

int ZeroShotCommand() {
  pb::ZeroShotClassifyRequest request;
  request.set_request_id("cli");
  request.set_text(absl::GetFlag(FLAGS_text));
  for (absl::string_view label : absl::StrSplit(absl::GetFlag(FLAGS_labels), ',', absl::SkipWhitespace())) {
    request.add_candidate_labels(std::string(label));
  }
  request.set_hypothesis_template(absl::GetFlag(FLAGS_hypothesis_template));
  request.set_multi_label(absl::GetFlag(FLAGS_multi_label));
  request.set_truncation(TruncationFromFlags());
  request.set_max_length(absl::GetFlag(FLAGS_max_length));
  pb::ZeroShotClassifyResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto status = pb::InferenceService::NewStub(MakeChannel())->ZeroShotClassify(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  for (const auto& label : response.labels()) std::cout << label.label() << "\t" << label.score() << "\n";
  return 0;
}

int RemoteTokenizeCommand() {
  pb::TokenizeRequest request;
  request.set_text(absl::GetFlag(FLAGS_text));
  if (!absl::GetFlag(FLAGS_text_pair).empty()) request.set_text_pair(absl::GetFlag(FLAGS_text_pair));
  request.set_truncation(TruncationFromFlags());
  request.set_max_length(absl::GetFlag(FLAGS_max_length));
  pb::TokenizeResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto status = pb::InferenceService::NewStub(MakeChannel())->Tokenize(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  for (int i = 0; i < response.token_ids_size(); ++i) {
    std::cout << response.token_ids(i) << "\t" << response.token_type_ids(i) << "\t" << response.pieces(i) << "\n";
  }
  if (response.truncated()) std::cout << "(truncated from " << response.full_length() << " tokens)\n";
  return 0;
}

int InfoCommand() {
  pb::ModelInfo info;
  grpc::ClientContext context;
  PrepareContext(&context);
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
  PrepareContext(&context);
  auto status = grpc::health::v1::Health::NewStub(MakeChannel())->Check(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()) << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

}  // namespace deberta::tools
