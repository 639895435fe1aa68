// The golden task cases (tests/golden_tasks, docs/tasks.md) through a real
// server on the case's model and tokenizer: every request of a case
// (ClassifyTokens, Rerank, windowed Classify, and the requests that must
// fail) sent as recorded over HTTP/JSON, and again over gRPC (the body
// parsed into the proto), each answer compared as tests/golden_tasks/
// README.md says: labels, spans, words, indices, orders and counts exact,
// scores within 1e-4 + 1e-4|x|, a field missing from an answer read as its
// zero value; errors by their code and the numbers their message names.
#include <google/protobuf/util/json_util.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <fstream>

#include "model/engine_factory.h"
#include "nlohmann/json.hpp"
#include "service/status_util.h"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

namespace pb = serving::v1;
using nlohmann::json;

std::string TaskCaseDir(const std::string& name) { return std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/" + name; }

// A field of an answer, or its zero value when proto3's JSON left it out.
template <typename T>
T Field(const json& object, const char* name, T zero) {
  return object.contains(name) ? object[name].get<T>() : zero;
}

void ExpectScore(double got, double want) { EXPECT_NEAR(got, want, 1e-4 + 1e-4 * std::abs(want)); }

// One ClassifyTokens answer (JSON) against the recorded request.
void ExpectEntities(const json& golden, const json& request, const json& answer) {
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
      ExpectScore(Field<double>(got[e], "score", 0), want[e]["score"].get<double>());
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

// One Rerank answer against the recorded order.
void ExpectRanking(const json& golden, const json& request, const json& answer) {
  const std::string key = request["answer"].get<std::string>();  // Named: no temporary key (g++14's -Wdangling-reference).
  const json& want = golden["answers"][key];
  const json got = Field(answer, "results", json::array());
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    SCOPED_TRACE(::testing::Message() << "result " << k);
    EXPECT_EQ(Field<int>(got[k], "index", 0), want[k]["index"].get<int>());
    ExpectScore(Field<double>(got[k], "score", 0), want[k]["score"].get<double>());
    EXPECT_EQ(Field<std::string>(got[k], "document", ""), want[k].value("document", ""));
    if (want[k].contains("num_windows")) {
      EXPECT_EQ(Field<int>(got[k], "numWindows", 0), want[k]["num_windows"].get<int>());
    }
    if (want[k].contains("num_tokens")) {
      EXPECT_EQ(got[k]["numTokens"].get<int>(), want[k]["num_tokens"].get<int>());
    }
  }
}

// One windowed Classify answer: per text its windows, its length, and the
// aggregate as the probabilities (the logits only when one window ran).
void ExpectWindowedClassification(const json& golden, const json& request, const json& answer) {
  const json results = Field(answer, "results", json::array());
  const std::vector<int> texts = request["texts"].get<std::vector<int>>();
  ASSERT_EQ(results.size(), texts.size());
  for (size_t k = 0; k < texts.size(); ++k) {
    SCOPED_TRACE(::testing::Message() << "text " << texts[k]);
    const json& text = golden["texts"][texts[k]];
    const std::string stride = std::to_string(request["stride"].get<int>());
    const json& run = text["strides"][stride];
    const int windows = run["num_windows"].get<int>();
    EXPECT_EQ(Field<int>(results[k], "numWindows", 0), windows);
    EXPECT_EQ(Field<int>(results[k], "numTokens", 0), text["num_tokens"].get<int>());
    const std::vector<double> want = run["aggregates"][request["aggregate"].get<std::string>()];
    const std::vector<double> got = Field(results[k], "probabilities", json::array());
    ASSERT_EQ(got.size(), want.size());
    for (size_t l = 0; l < want.size(); ++l) ExpectScore(got[l], want[l]);
    const std::vector<double> logits = Field(results[k], "logits", json::array());
    if (windows > 1) {
      EXPECT_TRUE(logits.empty());
    } else {
      const std::vector<double> window_logits = run["windows"][0]["logits"];
      ASSERT_EQ(logits.size(), window_logits.size());
      for (size_t l = 0; l < logits.size(); ++l) ExpectScore(logits[l], window_logits[l]);
    }
  }
}

// A request that must fail: its code (by name) and the strings its
// message names.
void ExpectError(const json& request, const std::string& code, const std::string& message) {
  EXPECT_EQ(code, request["error"]["code"].get<std::string>());
  for (const json& mention : request["error"]["mentions"]) {
    EXPECT_THAT(message, ::testing::HasSubstr(mention.get<std::string>()));
  }
}

void ExpectAnswer(const json& golden, const json& request, const json& answer) {
  const std::string route = request["route"].get<std::string>();
  if (route == "/v1/classify-tokens") return ExpectEntities(golden, request, answer);
  if (route == "/v1/rerank") return ExpectRanking(golden, request, answer);
  return ExpectWindowedClassification(golden, request, answer);
}

// The request's body as its proto, sent over gRPC; the answer as JSON, or
// the error's code name and message.
template <typename Request, typename Response>
void CallGrpc(grpc::Status (pb::InferenceService::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
              pb::InferenceService::Stub& stub, const std::string& body, grpc::Status* status, json* answer) {
  Request message;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(body, &message).ok()) << body;
  Response response;
  *status = (stub.*method)(ContextWithDeadline(60).get(), message, &response);
  std::string text;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(response, &text).ok());
  *answer = json::parse(text);
}

class TaskGoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::ifstream in(TaskCaseDir(GetParam()) + "/expected.json");
    ASSERT_TRUE(in);
    golden_ = json::parse(in);
    model::EngineOptions options;
    options.model = TaskCaseDir(GetParam());
    options.num_threads = 2;
    auto engine = model::CreateTorchEngine(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    auto tokenizer = model::LoadTokenizer(TaskCaseDir(GetParam()));
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

TEST_P(TaskGoldenTest, EveryRequestOverHttpAndGrpc) {
  httplib::Client http("127.0.0.1", server_->server->http_port());
  http.set_read_timeout(60);
  int requests = 0;
  for (const json& request : golden_["requests"]) {
    const std::string route = request["route"].get<std::string>();
    SCOPED_TRACE(::testing::Message() << route << " " << request.dump().substr(0, 160));
    const std::string body = request["body"].dump();
    const bool fails = request.contains("error");
    {
      SCOPED_TRACE("HTTP");
      const httplib::Result answer = http.Post(route, body, "application/json");
      ASSERT_TRUE(answer) << httplib::to_string(answer.error());
      if (fails) {
        EXPECT_GE(answer->status, 400);
        const json error = json::parse(answer->body);
        ExpectError(request, error["code"].get<std::string>(), error["message"].get<std::string>());
      } else {
        ASSERT_EQ(answer->status, 200) << answer->body;
        ExpectAnswer(golden_, request, json::parse(answer->body));
      }
    }
    {
      SCOPED_TRACE("gRPC");
      grpc::Status status;
      json answer;
      pb::InferenceService::Stub& stub = *server_->stub;
      if (route == "/v1/classify-tokens") {
        CallGrpc(&pb::InferenceService::Stub::ClassifyTokens, stub, body, &status, &answer);
      } else if (route == "/v1/rerank") {
        CallGrpc(&pb::InferenceService::Stub::Rerank, stub, body, &status, &answer);
      } else {
        ASSERT_EQ(route, "/v1/classify");
        CallGrpc(&pb::InferenceService::Stub::Classify, stub, body, &status, &answer);
      }
      if (fails) {
        ExpectError(request, service::GrpcCodeName(status.error_code()), status.error_message());
      } else {
        ASSERT_TRUE(status.ok()) << status.error_message();
        ExpectAnswer(golden_, request, answer);
      }
    }
    ++requests;
  }
  EXPECT_GE(requests, 4);
}

// The cases are named by their folders; the SentencePiece ones are left
// out under the sanitizers (scripts/sanitize.sh).
INSTANTIATE_TEST_SUITE_P(TaskGolden, TaskGoldenTest,
                         ::testing::Values("tc_authors_gpt2", "tc_hf_spm", "long_tc_spm", "rerank_spm",
                                           "long_cls_spm"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace deberta::testing
