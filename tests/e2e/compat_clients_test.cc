// The adapters for other servers' APIs, driven by those APIs' own clients
// from npm (tests/compat/package.json, pinned) against the real
// deberta-server binary on a repository of four models (a classifier with
// a fill-mask head, a token classifier, a reranker and an NLI classifier,
// all with GPT-2 tokenizers) and an API key: each answer the client parsed
// must equal our gRPC API's answer for the same input, a call without the
// key is refused, a bad parameter is named, and the calls are counted
// under their protocol's label.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "model/demo_model.h"
#include "model/demo_tokenizer.h"
#include "tests/testing/run_command.h"
#include "tests/testing/server_process.h"

namespace deberta::testing {
namespace {

namespace fs = std::filesystem;
namespace pb = serving::v1;
using ::testing::HasSubstr;
using nlohmann::json;

const std::string kCompatDir = std::string(CMAKE_SOURCE_DIR) + "/tests/compat";
constexpr char kKey[] = "compat-test-key";

// The last line of `output` that is a JSON object (the scripts print one;
// npm or node may print warnings before it).
json LastJsonLine(const std::string& output) {
  std::stringstream lines(output);
  std::string line;
  json last;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '{') continue;
    json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) last = std::move(parsed);
  }
  return last;
}

void SetLabels(const fs::path& dir, const json& id2label) {
  std::ifstream in(dir / "config.json");
  json config = json::parse(in);
  in.close();
  config["id2label"] = id2label;
  json label2id = json::object();
  for (const auto& [id, label] : id2label.items()) label2id[label.get<std::string>()] = std::stoi(id);
  config["label2id"] = label2id;
  std::ofstream(dir / "config.json") << config.dump();
}

class CompatClientsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (access((kCompatDir + "/node_modules").c_str(), F_OK) != 0) {
      CommandResult npm =
          RunCommand(absl::StrCat("npm ci --prefix ", kCompatDir, " --no-audit --no-fund --loglevel=error"));
      ASSERT_EQ(npm.exit_code, 0) << npm.output;
    }
    repository_ = new fs::path(fs::temp_directory_path() / absl::StrCat("e2e_compat_", getpid()));
    const fs::path& repository = *repository_;
    fs::remove_all(repository);
    for (const char* name : {"demo", "reranker", "nli"}) fs::create_directories(repository / name);
    ASSERT_TRUE(model::WriteDemoCheckpoint((repository / "demo").string()).ok());
    ASSERT_TRUE(model::WriteDemoCheckpoint((repository / "nli").string()).ok());
    SetLabels(repository / "nli", {{"0", "contradiction"}, {"1", "neutral"}, {"2", "entailment"}});
    model::RandomModelShape reranker = model::DemoModelShape();
    reranker.task = model::RandomModelTask::kRerank;
    ASSERT_TRUE(model::WriteRandomCheckpoint((repository / "reranker").string(), reranker).ok());
    fs::create_directory_symlink(std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/tc_authors_gpt2", repository / "ner");
    std::ofstream(repository / "keys") << kKey << "\n";
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start(DEBERTA_SERVER_BINARY,
                               {"--model_repository=" + repository.string(), "--api_keys_file=" +
                                (repository / "keys").string(), "--metrics_without_api_key",
                                "--listen_address=127.0.0.1", "--port=0", "--metrics_port=0", "--http_port=0",
                                "--threads=4"}));
    const std::string banner = server_->ReadLine();
    int port = 0, http_port = 0;
    ASSERT_TRUE(ParseBannerPorts(banner, &port, &metrics_port_)) << banner;
    ASSERT_TRUE(ParseBannerHttpPort(banner, &http_port)) << banner;
    base_ = new std::string(absl::StrCat("http://127.0.0.1:", http_port));
    stub_ = pb::InferenceService::NewStub(
                grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()))
                .release();
  }
  static void TearDownTestSuite() {
    if (server_ != nullptr) {
      server_->Signal(SIGTERM);
      EXPECT_EQ(server_->Wait(), 0);
    }
    delete server_;
    delete stub_;
    delete base_;
    if (repository_ != nullptr) fs::remove_all(*repository_);
    delete repository_;
  }

  // A gRPC call with the key.
  template <typename Request, typename Response>
  static Response Grpc(grpc::Status (pb::InferenceService::Stub::*method)(grpc::ClientContext*, const Request&,
                                                                         Response*),
                       const Request& request) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", absl::StrCat("Bearer ", kKey));
    Response response;
    const grpc::Status status = (stub_->*method)(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  static std::string Quoted(const std::string& text) { return absl::StrCat("'", text, "'"); }

  // The value of the requests counter's series with these label values.
  static double RequestsOf(const std::string& protocol, const std::string& endpoint, const std::string& model) {
    CommandResult metrics = RunCommand(absl::StrCat("curl -sf http://127.0.0.1:", metrics_port_, "/metrics"));
    EXPECT_EQ(metrics.exit_code, 0);
    std::stringstream lines(metrics.output);
    std::string line;
    double total = 0;
    while (std::getline(lines, line)) {
      if (line.rfind("deberta_requests_total{", 0) != 0) continue;
      if (line.find(absl::StrCat("protocol=\"", protocol, "\"")) == std::string::npos) continue;
      if (line.find(absl::StrCat("endpoint=\"", endpoint, "\"")) == std::string::npos) continue;
      if (line.find(absl::StrCat("model=\"", model, "\"")) == std::string::npos) continue;
      if (line.find("code=\"OK\"") == std::string::npos) continue;
      total += std::stod(line.substr(line.rfind(' ') + 1));
    }
    return total;
  }

  static fs::path* repository_;
  static ServerProcess* server_;
  static std::string* base_;
  static int metrics_port_;
  static pb::InferenceService::Stub* stub_;
};

fs::path* CompatClientsTest::repository_ = nullptr;
ServerProcess* CompatClientsTest::server_ = nullptr;
std::string* CompatClientsTest::base_ = nullptr;
int CompatClientsTest::metrics_port_ = 0;
pb::InferenceService::Stub* CompatClientsTest::stub_ = nullptr;

TEST_F(CompatClientsTest, HuggingFacesClientGetsTheGrpcAnswersForEachTask) {
  const json inputs = {{"text", "the quick brown fox"},
                       {"ner_text", "John Smith flew from Paris to Berlin."},
                       {"mask_text", "the quick [MASK] fox"},
                       {"premise", "A man is playing a guitar on stage."},
                       {"labels", {"music", "sports", "cooking"}}};
  CommandResult client = RunCommand(absl::StrCat("node ", kCompatDir, "/hf_client.mjs ", *base_, " ", kKey, " ",
                                                 Quoted(inputs.dump())));
  ASSERT_EQ(client.exit_code, 0) << client.output;
  const json out = LastJsonLine(client.output);
  ASSERT_TRUE(out.is_object()) << client.output;

  // text-classification: every label, highest first, the model's probabilities.
  pb::ClassifyRequest classify;
  classify.set_model("demo");
  classify.add_sequences()->set_text(inputs["text"]);
  const pb::ClassifyResponse classified = Grpc(&pb::InferenceService::Stub::Classify, classify);
  const auto& labels = classified.results(0).labels();
  ASSERT_EQ(out["textClassification"].size(), static_cast<size_t>(labels.size())) << out.dump();
  for (int i = 0; i < labels.size(); ++i) {
    EXPECT_EQ(out["textClassification"][i]["label"], labels[i].label());
    EXPECT_NEAR(out["textClassification"][i]["score"].get<double>(), labels[i].probability(), 1e-6);
  }
  // top_k 1 with function_to_apply sigmoid: the best label's logit through a sigmoid.
  ASSERT_EQ(out["textClassificationTop1Sigmoid"].size(), 1u);
  EXPECT_EQ(out["textClassificationTop1Sigmoid"][0]["label"], labels[0].label());
  EXPECT_NEAR(out["textClassificationTop1Sigmoid"][0]["score"].get<double>(),
              1.0 / (1.0 + std::exp(-double{labels[0].logit()})), 1e-6);

  // token-classification with aggregation simple.
  pb::ClassifyTokensRequest tokens;
  tokens.set_model("ner");
  tokens.set_aggregation(pb::AGGREGATION_SIMPLE);
  tokens.add_sequences()->set_text(inputs["ner_text"]);
  const pb::ClassifyTokensResponse entities = Grpc(&pb::InferenceService::Stub::ClassifyTokens, tokens);
  const auto& expected_entities = entities.results(0).entities();
  ASSERT_FALSE(expected_entities.empty()) << "a text without entities would compare nothing";
  ASSERT_EQ(out["tokenClassification"].size(), static_cast<size_t>(expected_entities.size())) << out.dump();
  for (int i = 0; i < expected_entities.size(); ++i) {
    const json& got = out["tokenClassification"][i];
    EXPECT_EQ(got["entity_group"], expected_entities[i].label());
    EXPECT_EQ(got["word"], expected_entities[i].word());
    EXPECT_EQ(got["start"], expected_entities[i].start());
    EXPECT_EQ(got["end"], expected_entities[i].end());
    EXPECT_NEAR(got["score"].get<double>(), expected_entities[i].score(), 1e-6);
  }

  // fill-mask, top 3: ids, probabilities, the filled texts, each token decoded alone.
  pb::FillMaskRequest fill;
  fill.set_model("demo");
  fill.set_top_k(3);
  fill.add_sequences()->mutable_sequence()->set_text(inputs["mask_text"]);
  const pb::FillMaskResponse filled = Grpc(&pb::InferenceService::Stub::FillMask, fill);
  const auto& candidates = filled.results(0).predictions(0).candidates();
  ASSERT_EQ(out["fillMask"].size(), 3u) << out.dump();
  for (int i = 0; i < candidates.size(); ++i) {
    const json& got = out["fillMask"][i];
    EXPECT_EQ(got["token"], candidates[i].token_id());
    EXPECT_NEAR(got["score"].get<double>(), candidates[i].probability(), 1e-6);
    EXPECT_EQ(got["sequence"], candidates[i].sequence());
    // token_str: the token decoded alone, or its piece for a row of the
    // model's vocabulary past the tokenizer's (this random model has 1024
    // rows, its tokenizer fewer pieces).
    pb::DetokenizeRequest detokenize;
    detokenize.set_model("demo");
    detokenize.add_token_ids(candidates[i].token_id());
    grpc::ClientContext context;
    context.AddMetadata("authorization", absl::StrCat("Bearer ", kKey));
    pb::DetokenizeResponse decoded;
    const grpc::Status status = stub_->Detokenize(&context, detokenize, &decoded);
    EXPECT_EQ(got["token_str"], status.ok() ? decoded.text() : candidates[i].token()) << status.error_message();
  }

  // zero-shot-classification, multi-label.
  pb::ZeroShotClassifyRequest zero_shot;
  zero_shot.set_model("nli");
  zero_shot.set_text(inputs["premise"]);
  for (const json& label : inputs["labels"]) zero_shot.add_candidate_labels(label.get<std::string>());
  zero_shot.set_multi_label(true);
  const pb::ZeroShotClassifyResponse scored = Grpc(&pb::InferenceService::Stub::ZeroShotClassify, zero_shot);
  ASSERT_EQ(out["zeroShot"].size(), static_cast<size_t>(scored.labels_size())) << out.dump();
  for (int i = 0; i < scored.labels_size(); ++i) {
    EXPECT_EQ(out["zeroShot"][i]["label"], scored.labels(i).label());
    EXPECT_NEAR(out["zeroShot"][i]["score"].get<double>(), scored.labels(i).score(), 1e-6);
  }

  EXPECT_THAT(out["errors"]["noKey"].get<std::string>(), HasSubstr("API key")) << out["errors"].dump();
  EXPECT_THAT(out["errors"]["badParameter"].get<std::string>(), HasSubstr("function_to_apply"));
  EXPECT_GE(RequestsOf("hf", "classify", "demo"), 2);
  EXPECT_GE(RequestsOf("hf", "classify_tokens", "ner"), 1);
  EXPECT_GE(RequestsOf("hf", "fill_mask", "demo"), 1);
  EXPECT_GE(RequestsOf("hf", "zero_shot_classify", "nli"), 1);
}

TEST_F(CompatClientsTest, CoheresClientGetsTheGrpcRankingWithRelevanceScoresAndTokens) {
  const std::string query = "where is the fox";
  const std::vector<std::string> documents = {"the quick brown fox", "a lazy dog sleeps", "foxes live in woods",
                                              "the stock market fell"};
  CommandResult client = RunCommand(absl::StrCat("node ", kCompatDir, "/cohere_client.mjs ", *base_, " ", kKey,
                                                 " reranker ", Quoted(query), " ", Quoted(json(documents).dump()),
                                                 " 2"));
  ASSERT_EQ(client.exit_code, 0) << client.output;
  const json out = LastJsonLine(client.output);
  ASSERT_TRUE(out.is_object()) << client.output;

  pb::RerankRequest rerank;
  rerank.set_model("reranker");
  rerank.set_query(query);
  for (const std::string& document : documents) rerank.add_documents(document);
  const pb::RerankResponse ranked = Grpc(&pb::InferenceService::Stub::Rerank, rerank);
  ASSERT_EQ(out["answer"]["results"].size(), 2u) << out.dump();
  int64_t tokens = 0;
  for (const pb::RerankResult& result : ranked.results()) tokens += result.num_tokens();
  for (int i = 0; i < 2; ++i) {
    const json& got = out["answer"]["results"][i];
    EXPECT_EQ(got["index"], ranked.results(i).index());
    const double score = got["relevanceScore"].get<double>();
    EXPECT_NEAR(score, ranked.results(i).score(), 1e-6);
    EXPECT_GE(score, 0.0);
    EXPECT_LE(score, 1.0);
  }
  EXPECT_GT(tokens, 0);
  EXPECT_EQ(out["answer"]["meta"]["billedUnits"]["inputTokens"], tokens) << out.dump();
  EXPECT_EQ(out["answer"]["id"].get<std::string>().size(), 36u);
  EXPECT_THAT(out["noKey"].get<std::string>(), HasSubstr("401")) << out.dump();
  EXPECT_THAT(out["noKey"].get<std::string>(), HasSubstr("API key"));
  EXPECT_GE(RequestsOf("cohere", "rerank", "reranker"), 1);
}

}  // namespace
}  // namespace deberta::testing
