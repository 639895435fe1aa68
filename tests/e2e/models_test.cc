// deberta-server with --model_repository on real checkpoints (golden task
// models): two models served side by side, each by name over gRPC and
// HTTP, with per-model readiness and metrics; then --model_control=poll
// swaps in a new version of one (a different checkpoint, so the answer
// shows the switch) and unloads a model whose folder is removed.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "tests/testing/pending_call.h"
#include "tests/testing/http_get.h"
#include "tests/testing/run_command.h"
#include "tests/testing/server_process.h"

namespace deberta::testing {
namespace {

namespace fs = std::filesystem;
namespace pb = serving::v1;
using ::testing::HasSubstr;

std::string CaseDir(const std::string& name) { return std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/" + name; }

class ModelRepositoryServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repository_ = fs::temp_directory_path() / absl::StrCat("e2e_repository_", getpid());
    fs::remove_all(repository_);
    fs::create_directories(repository_ / "ner");
    fs::create_directories(repository_ / "guard");
    // Version folders as links to the golden checkpoints (a link appears
    // at once: a poll never sees half a version).
    fs::create_directory_symlink(CaseDir("tc_authors_gpt2"), repository_ / "ner" / "1");
    fs::create_directory_symlink(CaseDir("long_cls_spm"), repository_ / "guard" / "1");
    std::ofstream(repository_ / "guard" / "serving.json") << R"({"max_batch_size": 8, "threads": 1})";
    ASSERT_TRUE(server_.Start(DEBERTA_SERVER_BINARY,
                              {"--model_repository=" + repository_.string(), "--model_control=poll",
                               "--repository_poll_interval=200ms", "--listen_address=127.0.0.1", "--port=0",
                               "--metrics_port=0", "--http_port=0", "--threads=2"}));
    banner_ = server_.ReadLine();
    ASSERT_TRUE(ParseBannerPorts(banner_, &port_, &metrics_port_)) << banner_;
    ASSERT_TRUE(ParseBannerHttpPort(banner_, &http_port_)) << banner_;
    stub_ = pb::InferenceService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    server_.Signal(SIGTERM);
    EXPECT_EQ(server_.Wait(), 0);
    fs::remove_all(repository_);
  }

  pb::ListModelsResponse List() {
    grpc::ClientContext context;
    pb::ListModelsResponse list;
    EXPECT_TRUE(stub_->ListModels(&context, pb::ListModelsRequest(), &list).ok());
    return list;
  }

  fs::path repository_;
  ServerProcess server_;
  std::string banner_;
  int port_ = 0, metrics_port_ = 0, http_port_ = 0;
  std::unique_ptr<pb::InferenceService::Stub> stub_;
};

TEST_F(ModelRepositoryServerTest, TwoModelsByNameThenAPolledSwapAndARemovedFolder) {
  EXPECT_THAT(banner_, HasSubstr("guard v1 (classify"));
  EXPECT_THAT(banner_, HasSubstr("ner v1 (token_classification"));
  pb::ListModelsResponse list = List();
  ASSERT_EQ(list.models_size(), 2);
  EXPECT_EQ(list.models(0).name(), "guard");
  EXPECT_EQ(list.models(0).state(), pb::MODEL_STATE_READY);
  EXPECT_EQ(list.models(1).name(), "ner");
  EXPECT_EQ(list.models(1).task(), "token_classification");

  // Each model by name; none named is refused, naming both.
  pb::ClassifyTokensRequest tokens;
  tokens.set_model("ner");
  tokens.add_sequences()->set_text("Alice moved to Paris in May.");
  pb::ClassifyTokensResponse entities;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->ClassifyTokens(&context, tokens, &entities).ok());
  }
  pb::ClassifyRequest classify;
  classify.add_sequences()->set_text("a short text to classify");
  {
    grpc::ClientContext context;
    pb::ClassifyResponse response;
    grpc::Status none = stub_->Classify(&context, classify, &response);
    EXPECT_EQ(none.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(none.error_message(), HasSubstr("(guard, ner)"));
  }
  classify.set_model("guard");
  pb::ClassifyResponse classified;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->Classify(&context, classify, &classified).ok());
  }

  // Over HTTP: the model in the path; readiness per model.
  CommandResult http = RunCommand(absl::StrCat(
      "curl -sS -X POST http://127.0.0.1:", http_port_,
      "/v1/models/guard/classify -d '{\"sequences\": [{\"text\": \"a short text to classify\"}]}'"));
  ASSERT_EQ(http.exit_code, 0) << http.output;
  EXPECT_THAT(http.output, HasSubstr(classified.results(0).labels(0).label()));
  auto listed = HttpGet(http_port_, "/v1/models");
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_THAT(*listed, HasSubstr("\"name\":\"ner\""));
  EXPECT_THAT(*listed, HasSubstr("MODEL_STATE_READY"));
  EXPECT_TRUE(HttpGet(http_port_, "/health/ready?model=ner").ok());
  auto unknown = RunCommand(absl::StrCat("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:", http_port_,
                                         "/health/ready?model=nope"));
  EXPECT_EQ(unknown.output, "404");

  // A new version of ner (another token classifier): the poll swaps it in.
  fs::create_directory_symlink(CaseDir("tc_hf_spm"), repository_ / "ner" / "2");
  ASSERT_TRUE(Eventually([&] { return List().models(1).version() == 2; }));
  pb::GetModelInfoRequest info_request;
  info_request.set_model("ner");
  pb::ModelInfo info;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub_->GetModelInfo(&context, info_request, &info).ok());
  }
  EXPECT_EQ(info.model_name(), "ner");
  EXPECT_EQ(info.version(), 2);
  EXPECT_EQ(info.tokenizer(), "spm");  // The new checkpoint's.
  auto metrics = HttpGet(metrics_port_, "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(*metrics, HasSubstr("deberta_model_state{model=\"ner\",state=\"ready\",version=\"2\"} 1\n"));
  EXPECT_THAT(*metrics, HasSubstr("deberta_model_state{model=\"ner\",state=\"ready\",version=\"1\"} 0\n"));
  EXPECT_THAT(*metrics, HasSubstr("deberta_requests_total{code=\"OK\",endpoint=\"classify\",model=\"guard\","
                                  "protocol=\"http\",version=\"1\"} 1\n"));

  // A removed folder: the model is unloaded and then unknown.
  fs::remove_all(repository_ / "guard");
  ASSERT_TRUE(Eventually([&] { return List().models_size() == 1; }));
  grpc::ClientContext context;
  pb::ClassifyResponse response;
  EXPECT_EQ(stub_->Classify(&context, classify, &response).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST(ModelRepositoryCliTest, TheCliNamesTheModelListsUnloadsAndLoads) {
  const fs::path repository = fs::temp_directory_path() / absl::StrCat("e2e_cli_repository_", getpid());
  fs::remove_all(repository);
  fs::create_directories(repository / "ner");
  fs::create_directory_symlink(CaseDir("tc_authors_gpt2"), repository / "ner" / "1");
  fs::create_directory_symlink(CaseDir("long_cls_spm"), repository / "guard");  // A checkpoint folder: version 1.
  const fs::path admin = repository.string() + ".admin";
  std::ofstream(admin) << "admin-secret\n";
  ServerProcess server;
  ASSERT_TRUE(server.Start(DEBERTA_SERVER_BINARY,
                           {"--model_repository=" + repository.string(), "--model_control=explicit",
                            "--admin_api_keys_file=" + admin.string(), "--listen_address=127.0.0.1", "--port=0",
                            "--metrics_port=0", "--threads=2"}));
  int port = 0, metrics_port = 0;
  const std::string banner = server.ReadLine();
  ASSERT_TRUE(ParseBannerPorts(banner, &port, &metrics_port)) << banner;
  auto cli = [port](const std::string& args) {
    return RunCommand(absl::StrCat(DEBERTA_CLI_BINARY, " ", args, " --server=127.0.0.1:", port));
  };
  CommandResult models = cli("models");
  ASSERT_EQ(models.exit_code, 0) << models.output;
  EXPECT_THAT(models.output, HasSubstr("guard v1 MODEL_STATE_READY classify cpu float32"));
  EXPECT_THAT(models.output, HasSubstr("ner v1 MODEL_STATE_READY token_classification"));
  CommandResult entities = cli("classify-tokens --model_name=ner --text='Alice moved to Paris.'");
  EXPECT_EQ(entities.exit_code, 0) << entities.output;
  CommandResult info = cli("info --model_name=guard");
  EXPECT_THAT(info.output, HasSubstr("model_name: \"guard\""));
  // Without the admin key: refused. With it: unloaded, then loaded again.
  EXPECT_NE(cli("unload-model --model_name=ner").exit_code, 0);
  CommandResult unloaded = cli("unload-model --model_name=ner --api_key=admin-secret");
  ASSERT_EQ(unloaded.exit_code, 0) << unloaded.output;
  EXPECT_THAT(unloaded.output, HasSubstr("ner v1 MODEL_STATE_UNAVAILABLE"));
  CommandResult refused = cli("classify-tokens --model_name=ner --text='Alice moved to Paris.'");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output, HasSubstr("UNAVAILABLE"));
  CommandResult loaded = cli("load-model --model_name=ner --api_key=admin-secret");
  ASSERT_EQ(loaded.exit_code, 0) << loaded.output;
  EXPECT_THAT(loaded.output, HasSubstr("ner v1 MODEL_STATE_READY"));
  EXPECT_EQ(cli("classify-tokens --model_name=ner --text='Alice moved to Paris.'").exit_code, 0);
  server.Signal(SIGTERM);
  EXPECT_EQ(server.Wait(), 0);
  fs::remove_all(repository);
  fs::remove(admin);
}

}  // namespace
}  // namespace deberta::testing
