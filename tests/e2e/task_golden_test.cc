// The golden task cases (tests/golden_tasks, docs/tasks.md) through a real
// server on the case's model and tokenizer: every ClassifyTokens request of
// a case sent as recorded over HTTP/JSON, and again over gRPC (the body
// parsed into the proto), each answer compared as tests/golden_tasks/
// README.md says: labels, spans, words, indices and counts exact, scores
// within 1e-4 + 1e-4|x|, a field missing from an answer read as its zero
// value.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <fstream>

#include "model/engine_factory.h"
#include "nlohmann/json.hpp"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

namespace pb = serving::v1;
using nlohmann::json;

std::string CaseDir(const std::string& name) { return std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/" + name; }

// A field of an answer, or its zero value when proto3's JSON left it out.
template <typename T>
T Field(const json& object, const char* name, T zero) {
  return object.contains(name) ? object[name].get<T>() : zero;
}

// One ClassifyTokens answer (JSON) against the recorded request.
void ExpectAnswer(const json& golden, const json& request, const json& answer) {
  const json& results = answer["results"];
  const std::vector<int> texts = request["texts"].get<std::vector<int>>();
  ASSERT_EQ(results.size(), texts.size());
  for (size_t k = 0; k < texts.size(); ++k) {
    SCOPED_TRACE(::testing::Message() << "text " << texts[k]);
    const json& text = golden["texts"][texts[k]];
    const std::string variant = request["variant"].get<std::string>(), strategy = request["strategy"].get<std::string>();
    const json& want = text["answers"][variant][strategy];
    const json got = Field(results[k], "entities", json::array());
    ASSERT_EQ(got.size(), want.size());
    for (size_t e = 0; e < want.size(); ++e) {
      SCOPED_TRACE(::testing::Message() << "entity " << e);
      EXPECT_EQ(Field<std::string>(got[e], "label", ""), want[e]["label"].get<std::string>());
      const double score = want[e]["score"].get<double>();
      EXPECT_NEAR(Field<double>(got[e], "score", 0), score, 1e-4 + 1e-4 * std::abs(score));
      EXPECT_EQ(Field<int>(got[e], "start", 0), want[e]["start"].get<int>());
      EXPECT_EQ(Field<int>(got[e], "end", 0), want[e]["end"].get<int>());
      EXPECT_EQ(Field<std::string>(got[e], "word", ""), want[e]["word"].get<std::string>());
      EXPECT_EQ(Field<int>(got[e], "index", 0), want[e]["index"].get<int>());
    }
    if (text.contains("num_windows")) {
      EXPECT_EQ(Field<int>(results[k], "numWindows", 0), text["num_windows"].get<int>());
      EXPECT_EQ(Field<int>(results[k], "numTokens", 0), text["num_tokens"].get<int>());
    }
  }
}

class TaskGoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::ifstream in(CaseDir(GetParam()) + "/expected.json");
    ASSERT_TRUE(in);
    golden_ = json::parse(in);
    model::EngineOptions options;
    options.model = CaseDir(GetParam());
    options.num_threads = 2;
    auto engine = model::CreateTorchEngine(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    auto tokenizer = model::LoadTokenizer(CaseDir(GetParam()));
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    service::ServerConfig config;
    config.http_port = 0;
    auto server = StartTestServer(*std::move(engine), config, *std::move(tokenizer));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  json golden_;
  std::unique_ptr<TestServer> server_;
};

TEST_P(TaskGoldenTest, EveryClassifyTokensRequestOverHttpAndGrpc) {
  httplib::Client http("127.0.0.1", server_->server->http_port());
  http.set_read_timeout(60);
  int requests = 0;
  for (const json& request : golden_["requests"]) {
    if (request["route"] != "/v1/classify-tokens") continue;
    SCOPED_TRACE(::testing::Message() << request["variant"] << " " << request["strategy"]);
    const std::string body = request["body"].dump();
    {
      SCOPED_TRACE("HTTP");
      const httplib::Result answer = http.Post("/v1/classify-tokens", body, "application/json");
      ASSERT_TRUE(answer) << httplib::to_string(answer.error());
      ASSERT_EQ(answer->status, 200) << answer->body;
      ExpectAnswer(golden_, request, json::parse(answer->body));
    }
    {
      SCOPED_TRACE("gRPC");
      pb::ClassifyTokensRequest message;
      ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(body, &message).ok());
      pb::ClassifyTokensResponse response;
      const grpc::Status status = server_->stub->ClassifyTokens(ContextWithDeadline(60).get(), message, &response);
      ASSERT_TRUE(status.ok()) << status.error_message();
      std::string text;
      ASSERT_TRUE(google::protobuf::util::MessageToJsonString(response, &text).ok());
      ExpectAnswer(golden_, request, json::parse(text));
    }
    ++requests;
  }
  EXPECT_GE(requests, 15);
}

// The cases are named by their folders; the SentencePiece ones are left
// out under the sanitizers (scripts/sanitize.sh).
INSTANTIATE_TEST_SUITE_P(TaskGolden, TaskGoldenTest,
                         ::testing::Values("tc_authors_gpt2", "tc_hf_spm", "long_tc_spm"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace deberta::testing
