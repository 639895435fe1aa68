// classify, fill-mask, zero-shot, classify-tokens, rerank, tokenize
// (remote), info and health.
#include "tools/client_commands.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tools/bench_common.h"
#include "tools/cli_help.h"
#include "tools/grpc_client.h"

ABSL_FLAG(std::string, sequences, "",
          "classify, fill-mask, classify-tokens: token ids, space-separated, sequences split by ';' (none may be "
          "empty)");
ABSL_FLAG(std::string, positions, "",
          "fill-mask: positions to predict, comma-separated, one group per sequence split by ';' "
          "(default: the mask token's positions)");
ABSL_FLAG(int, top_k, 0, "classify, fill-mask: labels (classify) or candidates (fill-mask) to return");
ABSL_FLAG(std::string, health_service, "", "health: service name ('' = whole server)");
ABSL_FLAG(std::string, text, "",
          "classify, fill-mask, tokenize, zero-shot, classify-tokens: text instead of --sequences (fill-mask: with "
          "[MASK] in it)");
ABSL_FLAG(std::string, text_pair, "", "classify, tokenize: second text of a pair ([CLS] text [SEP] text_pair [SEP])");
ABSL_FLAG(std::string, labels, "", "zero-shot: candidate labels, comma-separated");
ABSL_FLAG(std::string, hypothesis_template, "", "zero-shot: hypothesis with {} for the label ('' = This example is {}.)");
ABSL_FLAG(bool, multi_label, false, "zero-shot: score each label on its own (entailment vs contradiction)");
ABSL_FLAG(int, max_length, 0,
          "classify, tokenize, zero-shot: truncate text to this many tokens (longest_first; 0: none); "
          "classify, zero-shot, classify-tokens, rerank: the window length with --windows (0: the model's)");
ABSL_FLAG(std::string, aggregation, "simple",
          "classify-tokens: none (one entity per token), simple (B-/I- runs grouped), first, average or max "
          "(per word, then grouped)");
ABSL_FLAG(std::string, ignore_labels, "", "classify-tokens: labels to drop, comma-separated ('' = O)");
ABSL_FLAG(bool, keep_all_labels, false, "classify-tokens: drop no label, O included");
ABSL_FLAG(bool, windows, false,
          "classify, zero-shot, classify-tokens, rerank: run a long text (of a pair, --text_pair; each document) in "
          "windows of --max_length");
ABSL_FLAG(int, stride, 0, "classify, zero-shot, classify-tokens, rerank: tokens consecutive windows share");
ABSL_FLAG(std::string, aggregate, "max",
          "classify, zero-shot, rerank: how the windows' scores combine: max, mean or first");
ABSL_FLAG(std::string, query, "", "rerank: the query");
ABSL_FLAG(std::string, documents, "", "rerank: the documents, separated by '|'");
ABSL_FLAG(std::string, documents_file, "", "rerank: a file of documents, one a line (instead of --documents)");
ABSL_FLAG(int, top_n, 0, "rerank: keep the n best documents (0: all)");
ABSL_FLAG(bool, raw_scores, false, "rerank: scores are logits, not their sigmoid");

namespace deberta::tools {
namespace {

namespace pb = serving::v1;

// Groups of integers in `text`: groups split by `group` (none may be
// empty), values by `item`. On a bad value prints what and where (naming
// `flag`) and returns false.
bool ParseIntGroups(const char* flag, const std::string& text, char group, char item,
                    std::vector<std::vector<int>>* out) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, group);
  for (size_t i = 0; i < parts.size(); ++i) {
    std::vector<int> values;
    for (absl::string_view token : absl::StrSplit(parts[i], item, absl::SkipWhitespace())) {
      int value;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(token), &value)) {
        std::cerr << "error: --" << flag << ": '" << token << "' (group " << i + 1 << ") is not an integer\n";
        return false;
      }
      values.push_back(value);
    }
    if (values.empty()) {
      std::cerr << "error: --" << flag << ": group " << i + 1 << " of " << parts.size() << " is empty\n";
      return false;
    }
    out->push_back(std::move(values));
  }
  return true;
}

// --sequences, required when there is no --text.
bool ParseSequences(std::vector<std::vector<int>>* out) {
  if (absl::GetFlag(FLAGS_sequences).empty()) {
    std::cerr << "error: --sequences (e.g. --sequences=\"1 17 42 2\") or --text is required\n";
    return false;
  }
  return ParseIntGroups("sequences", absl::GetFlag(FLAGS_sequences), ';', ' ', out);
}

// --text (and --text_pair) as one sequence.
bool HasText() { return !absl::GetFlag(FLAGS_text).empty() || !absl::GetFlag(FLAGS_text_pair).empty(); }

void SetText(pb::Sequence* sequence) {
  sequence->set_text(absl::GetFlag(FLAGS_text));
  if (!absl::GetFlag(FLAGS_text_pair).empty()) sequence->set_text_pair(absl::GetFlag(FLAGS_text_pair));
}

// With --json: `message` in protobuf's JSON mapping, zero values included;
// returns whether it printed.
bool PrintJson(const google::protobuf::Message& message) {
  if (!absl::GetFlag(FLAGS_json)) return false;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  options.add_whitespace = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  std::cout << json;
  return true;
}

}  // namespace

pb::Truncation TruncationFromFlags() {
  return absl::GetFlag(FLAGS_max_length) > 0 ? pb::TRUNCATION_LONGEST_FIRST : pb::TRUNCATION_UNSPECIFIED;
}

// --windows, --stride and --aggregate into `long_input`; on a bad
// --aggregate prints why and returns false.
bool LongInputFromFlags(pb::LongInput* long_input) {
  pb::LongInput::Aggregate aggregate;
  const std::string name = absl::AsciiStrToUpper(absl::GetFlag(FLAGS_aggregate));
  if (!pb::LongInput::Aggregate_Parse("AGGREGATE_" + name, &aggregate) ||
      aggregate == pb::LongInput::AGGREGATE_UNSPECIFIED) {
    std::cerr << "error: --aggregate is '" << absl::GetFlag(FLAGS_aggregate) << "'; expected max, mean or first\n";
    return false;
  }
  if (!absl::GetFlag(FLAGS_windows)) return true;
  long_input->set_mode(pb::LongInput::MODE_WINDOWS);
  long_input->set_stride(absl::GetFlag(FLAGS_stride));
  long_input->set_aggregate(aggregate);
  return true;
}

int ClassifyCommand() {
  pb::ClassifyRequest request;
  request.set_request_id("cli");
  request.set_model(ModelNameFromFlags());
  request.set_top_k(absl::GetFlag(FLAGS_top_k));
  if (HasText()) {
    SetText(request.add_sequences());
    request.set_truncation(TruncationFromFlags());
    request.set_max_length(absl::GetFlag(FLAGS_max_length));
    if (!LongInputFromFlags(request.mutable_long_input())) return kExitUsage;
  } else {
    std::vector<std::vector<int>> sequences;
    if (!ParseSequences(&sequences)) return kExitUsage;
    for (const auto& ids : sequences) {
      *request.add_sequences()->mutable_token_ids() = {ids.begin(), ids.end()};
    }
  }
  pb::ClassifyResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto status = pb::InferenceService::NewStub(MakeChannel())->Classify(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  if (PrintJson(response)) return kExitOk;
  for (int i = 0; i < response.results_size(); ++i) {
    std::cout << "sequence " << i << ":";
    if (response.results(i).num_windows() > 1) std::cout << " (" << response.results(i).num_windows() << " windows)";
    for (const auto& l : response.results(i).labels()) {
      std::cout << "  " << l.label_id() << " " << l.label() << " " << l.probability();
    }
    std::cout << "\n";
  }
  return kExitOk;
}

int FillMaskCommand() {
  pb::FillMaskRequest request;
  request.set_request_id("cli");
  request.set_model(ModelNameFromFlags());
  request.set_top_k(absl::GetFlag(FLAGS_top_k));
  if (HasText()) {
    request.add_sequences()->mutable_sequence()->set_text(absl::GetFlag(FLAGS_text));
  } else {
    std::vector<std::vector<int>> sequences;
    if (!ParseSequences(&sequences)) return kExitUsage;
    for (const auto& ids : sequences) {
      *request.add_sequences()->mutable_sequence()->mutable_token_ids() = {ids.begin(), ids.end()};
    }
  }
  if (!absl::GetFlag(FLAGS_positions).empty()) {
    std::vector<std::vector<int>> positions;
    if (!ParseIntGroups("positions", absl::GetFlag(FLAGS_positions), ';', ',', &positions)) return kExitUsage;
    if (static_cast<int>(positions.size()) != request.sequences_size()) {
      std::cerr << "error: --positions has " << positions.size() << " group(s) for " << request.sequences_size()
                << " sequence(s); give one group per sequence\n";
      return kExitUsage;
    }
    for (size_t i = 0; i < positions.size(); ++i) {
      *request.mutable_sequences(static_cast<int>(i))->mutable_positions() = {positions[i].begin(),
                                                                               positions[i].end()};
    }
  }
  pb::FillMaskResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto status = pb::InferenceService::NewStub(MakeChannel())->FillMask(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  if (PrintJson(response)) return kExitOk;
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
  return kExitOk;
}

int ClassifyTokensCommand() {
  pb::ClassifyTokensRequest request;
  request.set_request_id("cli");
  request.set_model(ModelNameFromFlags());
  const std::string aggregation = absl::AsciiStrToUpper(absl::GetFlag(FLAGS_aggregation));
  pb::Aggregation parsed;
  if (!pb::Aggregation_Parse("AGGREGATION_" + aggregation, &parsed) || parsed == pb::AGGREGATION_UNSPECIFIED) {
    std::cerr << "error: --aggregation is '" << absl::GetFlag(FLAGS_aggregation)
              << "'; expected none, simple, first, average or max\n";
    return kExitUsage;
  }
  request.set_aggregation(parsed);
  for (absl::string_view label : absl::StrSplit(absl::GetFlag(FLAGS_ignore_labels), ',', absl::SkipWhitespace())) {
    request.add_ignore_labels(std::string(label));
  }
  request.set_keep_all_labels(absl::GetFlag(FLAGS_keep_all_labels));
  request.set_max_length(absl::GetFlag(FLAGS_max_length));
  if (!LongInputFromFlags(request.mutable_long_input())) return kExitUsage;
  if (HasText()) {
    request.add_sequences()->set_text(absl::GetFlag(FLAGS_text));
  } else {
    std::vector<std::vector<int>> sequences;
    if (!ParseSequences(&sequences)) return kExitUsage;
    for (const auto& ids : sequences) {
      *request.add_sequences()->mutable_token_ids() = {ids.begin(), ids.end()};
    }
  }
  pb::ClassifyTokensResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto status = pb::InferenceService::NewStub(MakeChannel())->ClassifyTokens(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  if (PrintJson(response)) return kExitOk;
  for (int i = 0; i < response.results_size(); ++i) {
    const pb::TokenClassification& result = response.results(i);
    std::cout << "sequence " << i << ": " << result.entities_size() << " entities, " << result.num_tokens()
              << " tokens, " << result.num_windows() << " window(s)\n";
    for (const pb::Entity& e : result.entities()) {
      std::cout << "  " << e.label() << "\t" << e.score() << "\t[" << e.start() << ", " << e.end() << ")";
      if (!e.word().empty()) std::cout << "\t'" << e.word() << "'";
      if (e.index() >= 0) std::cout << "\ttoken " << e.index();
      std::cout << "\n";
    }
  }
  return kExitOk;
}

int ZeroShotCommand() {
  pb::ZeroShotClassifyRequest request;
  request.set_request_id("cli");
  request.set_model(ModelNameFromFlags());
  request.set_text(absl::GetFlag(FLAGS_text));
  for (absl::string_view label : absl::StrSplit(absl::GetFlag(FLAGS_labels), ',', absl::SkipWhitespace())) {
    request.add_candidate_labels(std::string(label));
  }
  request.set_hypothesis_template(absl::GetFlag(FLAGS_hypothesis_template));
  request.set_multi_label(absl::GetFlag(FLAGS_multi_label));
  request.set_truncation(TruncationFromFlags());
  request.set_max_length(absl::GetFlag(FLAGS_max_length));
  if (!LongInputFromFlags(request.mutable_long_input())) return kExitUsage;
  pb::ZeroShotClassifyResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto status = pb::InferenceService::NewStub(MakeChannel())->ZeroShotClassify(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  if (PrintJson(response)) return kExitOk;
  for (const auto& label : response.labels()) std::cout << label.label() << "\t" << label.score() << "\n";
  if (response.num_windows() > 1) std::cout << "(" << response.num_windows() << " windows)\n";
  return kExitOk;
}

int RerankCommand() {
  pb::RerankRequest request;
  request.set_request_id("cli");
  request.set_model(ModelNameFromFlags());
  request.set_query(absl::GetFlag(FLAGS_query));
  if (!absl::GetFlag(FLAGS_documents_file).empty()) {
    std::ifstream in(absl::GetFlag(FLAGS_documents_file));
    if (!in) {
      std::cerr << "error: cannot read --documents_file " << absl::GetFlag(FLAGS_documents_file) << "\n";
      return kExitUsage;
    }
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) request.add_documents(line);
    }
  } else {
    for (absl::string_view document : absl::StrSplit(absl::GetFlag(FLAGS_documents), '|', absl::SkipWhitespace())) {
      request.add_documents(std::string(document));
    }
  }
  if (request.query().empty() || request.documents().empty()) {
    std::cerr << "error: rerank needs --query and --documents (or --documents_file)\n";
    return kExitUsage;
  }
  request.set_top_n(absl::GetFlag(FLAGS_top_n));
  request.set_raw_scores(absl::GetFlag(FLAGS_raw_scores));
  request.set_max_length(absl::GetFlag(FLAGS_max_length));
  if (!LongInputFromFlags(request.mutable_long_input())) return kExitUsage;
  pb::RerankResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto status = pb::InferenceService::NewStub(MakeChannel())->Rerank(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  if (PrintJson(response)) return kExitOk;
  for (const pb::RerankResult& result : response.results()) {
    std::cout << result.index() << "\t" << result.score();
    if (result.num_windows() > 1) std::cout << "\t(" << result.num_windows() << " windows)";
    std::cout << "\t" << request.documents(result.index()) << "\n";
  }
  return kExitOk;
}

int RemoteTokenizeCommand() {
  pb::TokenizeRequest request;
  request.set_model(ModelNameFromFlags());
  request.set_text(absl::GetFlag(FLAGS_text));
  if (!absl::GetFlag(FLAGS_text_pair).empty()) request.set_text_pair(absl::GetFlag(FLAGS_text_pair));
  request.set_truncation(TruncationFromFlags());
  request.set_max_length(absl::GetFlag(FLAGS_max_length));
  pb::TokenizeResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto status = pb::InferenceService::NewStub(MakeChannel())->Tokenize(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  if (PrintJson(response)) return kExitOk;
  for (int i = 0; i < response.token_ids_size(); ++i) {
    std::cout << response.token_ids(i) << "\t" << response.token_type_ids(i) << "\t" << response.pieces(i) << "\n";
  }
  if (response.truncated()) std::cout << "(truncated from " << response.full_length() << " tokens)\n";
  return kExitOk;
}

int InfoCommand() {
  pb::ModelInfo info;
  grpc::ClientContext context;
  PrepareContext(&context);
  pb::GetModelInfoRequest request;
  request.set_model(ModelNameFromFlags());
  auto status = pb::InferenceService::NewStub(MakeChannel())->GetModelInfo(&context, request, &info);
  if (!status.ok()) return ReportRpcError(status);
  if (PrintJson(info)) return kExitOk;
  // One "field: value" a line, every field (zeros are values here: pad id
  // 0 is an id).
  const google::protobuf::Descriptor* descriptor = info.GetDescriptor();
  const google::protobuf::Reflection* reflection = info.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    std::string value;
    if (field->is_repeated()) {
      for (int k = 0; k < reflection->FieldSize(info, field); ++k) {
        value += (k > 0 ? ", " : "") + reflection->GetRepeatedString(info, field, k);
      }
    } else {
      google::protobuf::TextFormat::PrintFieldValueToString(info, field, -1, &value);
    }
    std::cout << field->name() << ": " << value << "\n";
  }
  return kExitOk;
}

int ModelsCommand() {
  pb::ListModelsResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto status = pb::InferenceService::NewStub(MakeChannel())->ListModels(&context, {}, &response);
  if (!status.ok()) return ReportRpcError(status);
  if (PrintJson(response)) return kExitOk;
  for (const pb::ModelStatus& model : response.models()) {
    std::cout << model.name() << " v" << model.version() << " " << pb::ModelState_Name(model.state()) << " "
              << (model.task().empty() ? "-" : model.task()) << " " << (model.device().empty() ? "-" : model.device())
              << " " << (model.dtype().empty() ? "-" : model.dtype())
              << (model.error().empty() ? "" : absl::StrCat(" error: ", model.error())) << "\n";
  }
  return kExitOk;
}

int LoadModelCommand(bool load) {
  const std::string model = ModelNameFromFlags();
  if (model.empty()) {
    std::cerr << "error: name the model with --model_name\n";
    return kExitUsage;
  }
  pb::ModelStatus response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto stub = pb::InferenceService::NewStub(MakeChannel());
  grpc::Status status;
  if (load) {
    pb::LoadModelRequest request;
    request.set_model(model);
    status = stub->LoadModel(&context, request, &response);
  } else {
    pb::UnloadModelRequest request;
    request.set_model(model);
    status = stub->UnloadModel(&context, request, &response);
  }
  if (!status.ok()) return ReportRpcError(status);
  if (!PrintJson(response)) {
    std::cout << response.name() << " v" << response.version() << " " << pb::ModelState_Name(response.state()) << "\n";
  }
  return kExitOk;
}

int HealthCommand() {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(absl::GetFlag(FLAGS_health_service));
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  PrepareContext(&context);
  auto status = grpc::health::v1::Health::NewStub(MakeChannel())->Check(&context, request, &response);
  if (!status.ok()) return ReportRpcError(status);
  if (!PrintJson(response)) {
    std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()) << "\n";
  }
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? kExitOk : kExitServerError;
}

}  // namespace deberta::tools
