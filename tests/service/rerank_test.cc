// Rerank (docs/tasks.md 2) through a server on the FakeEngine as a
// one-label model (its logit is the sequence's length / 10) with the
// tc_authors_gpt2 golden case's GPT-2 tokenizer (loadable under the
// sanitizers): documents ordered by sigmoid(logit)
// or the logit, ties by lower index, top_n, documents echoed on request; a
// request of many documents is one call over several batches; windows per
// document with each aggregate, counted in the metrics and access log and
// dropped when the call ends; and the refusals before anything is queued
// (a model with more labels, naming them; no query or documents; too many;
// a negative top_n; a document too long without windows, named).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <prometheus/text_serializer.h>
#include <sstream>

#include "absl/strings/str_split.h"
#include "model/tokenizer.h"
#include "service/server_config.h"
#include "absl/synchronization/notification.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/pending_call.h"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

namespace pb = serving::v1;
using ::testing::HasSubstr;

float Sigmoid(float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-double{x}))); }

class RerankTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> labels = {"LABEL_0"}, std::ostream* access_log = nullptr) {
    auto engine = std::make_unique<FakeEngine>();
    engine->mutable_info()->labels = std::move(labels);
    engine->mutable_info()->vocab_size = 861;  // tc_authors_gpt2's.
    engine->mutable_info()->max_sequence_length = 64;
    fake_ = engine.get();
    auto tokenizer = model::LoadTokenizer(std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/tc_authors_gpt2");
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizer_ = tokenizer->get();
    service::ServerConfig config;
    config.batcher.max_batch_size = 4;
    config.service.requests.max_rerank_documents = 12;
    config.service.requests.max_windows = 16;
    if (access_log != nullptr) {
      config.access_log = service::AccessLogFormat::kJson;
      config.access_log_out = access_log;
    }
    auto server = StartTestServer(std::move(engine), config, *std::move(tokenizer));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  grpc::Status Call(const pb::RerankRequest& request, pb::RerankResponse* response) {
    return server_->stub->Rerank(ContextWithDeadline().get(), request, response);
  }

  // Tokens of [CLS] query [SEP] document [SEP].
  int Length(const std::string& query, const std::string& document) const {
    return static_cast<int>(tokenizer_->Tokenize(query)->size() + tokenizer_->Tokenize(document)->size() + 3);
  }

  static pb::RerankRequest Request(const std::vector<std::string>& documents) {
    pb::RerankRequest request;
    request.set_request_id("r");
    request.set_query("Where is the tower?");
    for (const std::string& document : documents) request.add_documents(document);
    return request;
  }

  FakeEngine* fake_ = nullptr;
  const model::Tokenizer* tokenizer_ = nullptr;
  std::unique_ptr<TestServer> server_;
};

TEST_F(RerankTest, OrdersDocumentsBySigmoidOfTheirLogitWithTiesByIndex) {
  Start();
  const std::vector<std::string> documents = {"Short.", "A rather longer document about the tower in Paris.",
                                              "Short.", "Medium length text here."};
  pb::RerankResponse response;
  ASSERT_TRUE(Call(Request(documents), &response).ok());
  EXPECT_EQ(response.request_id(), "r");
  ASSERT_EQ(response.results_size(), 4);
  const std::vector<int> order = {1, 3, 0, 2};  // Longest first; the two "Short." by index.
  for (int k = 0; k < 4; ++k) {
    const pb::RerankResult& result = response.results(k);
    EXPECT_EQ(result.index(), order[k]);
    EXPECT_FLOAT_EQ(result.score(), Sigmoid(Length("Where is the tower?", documents[order[k]]) / 10.0f));
    EXPECT_EQ(result.document(), "");
    EXPECT_EQ(result.num_windows(), 1);
  }
}

TEST_F(RerankTest, TopNRawScoresAndDocuments) {
  Start();
  pb::RerankRequest request =
      Request({"Short.", "A rather longer document about the tower and its builders.", "Some middling text."});
  request.set_top_n(2);
  request.set_raw_scores(true);
  request.set_return_documents(true);
  pb::RerankResponse response;
  ASSERT_TRUE(Call(request, &response).ok());
  ASSERT_EQ(response.results_size(), 2);
  EXPECT_EQ(response.results(0).index(), 1);
  EXPECT_EQ(response.results(0).document(), "A rather longer document about the tower and its builders.");
  EXPECT_FLOAT_EQ(response.results(0).score(),
                  Length("Where is the tower?", "A rather longer document about the tower and its builders.") / 10.0f);
  EXPECT_EQ(response.results(1).index(), 2);
}

TEST_F(RerankTest, ManyDocumentsAreOneCallOverSeveralBatches) {
  Start();
  std::vector<std::string> documents;
  for (int i = 0; i < 10; ++i) documents.push_back(std::string(static_cast<size_t>(i + 1), 'x'));
  pb::RerankResponse response;
  ASSERT_TRUE(Call(Request(documents), &response).ok());
  EXPECT_EQ(response.results_size(), 10);
  size_t sequences = 0;
  for (const std::vector<size_t>& batch : fake_->BatchLengths()) {
    EXPECT_LE(batch.size(), 4u);
    sequences += batch.size();
  }
  EXPECT_EQ(sequences, 10u);
  EXPECT_GE(fake_->batches_run(), 3);
}

TEST_F(RerankTest, WindowsPerDocumentAggregatedByMaxMeanOrFirst) {
  Start();
  const std::string query = "Where is the tower?";
  const std::string long_document =
      "The tower was named after the engineer whose company designed it, and it was built for the world's fair "
      "held in Paris in the spring of the year the revolution turned one hundred.";
  const int query_part = Length(query, "");                               // [CLS] query [SEP] [SEP].
  const int n = Length(query, long_document) - query_part;                // The document's tokens.
  const int windows = (n + 9) / 10;                                       // C = 10, stride 0.
  ASSERT_GE(windows, 3);
  pb::RerankRequest request = Request({"Short.", long_document});
  request.set_max_length(query_part + 10);
  {
    pb::RerankResponse response;
    const grpc::Status too_long = Call(request, &response);  // No windows, no truncation.
    EXPECT_EQ(too_long.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(too_long.error_message(), HasSubstr("document 1:"));
  }
  request.mutable_long_input()->set_mode(pb::LongInput::MODE_WINDOWS);
  double mean = 0;
  for (int k = 0; k < windows; ++k) mean += Sigmoid((query_part + std::min(10, n - 10 * k)) / 10.0f);
  mean /= windows;
  const float full = Sigmoid((query_part + 10) / 10.0f);
  for (auto [aggregate, want] : {std::pair{pb::LongInput::AGGREGATE_UNSPECIFIED, double{full}},
                                 std::pair{pb::LongInput::AGGREGATE_MEAN, mean},
                                 std::pair{pb::LongInput::AGGREGATE_FIRST, double{full}}}) {
    SCOPED_TRACE(pb::LongInput::Aggregate_Name(aggregate));
    request.mutable_long_input()->set_aggregate(aggregate);
    pb::RerankResponse response;
    const grpc::Status status = Call(request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(response.results_size(), 2);
    EXPECT_EQ(response.results(0).index(), 1);  // Its windows are longer than "Short.".
    EXPECT_EQ(response.results(0).num_windows(), windows);
    EXPECT_NEAR(response.results(0).score(), want, 1e-6);
    EXPECT_EQ(response.results(1).num_windows(), 1);
  }
}

TEST_F(RerankTest, RefusalsBeforeAnythingIsQueued) {
  Start();
  pb::RerankResponse response;
  pb::RerankRequest no_query = Request({"a"});
  no_query.clear_query();
  EXPECT_THAT(Call(no_query, &response).error_message(), HasSubstr("query is empty"));
  EXPECT_THAT(Call(Request({}), &response).error_message(), HasSubstr("no documents"));
  EXPECT_THAT(Call(Request(std::vector<std::string>(13, "a")), &response).error_message(),
              HasSubstr("13 documents; the maximum is 12"));
  pb::RerankRequest negative = Request({"a"});
  negative.set_top_n(-1);
  EXPECT_EQ(Call(negative, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(fake_->batches_run(), 0);
}

TEST_F(RerankTest, AClassifierWithSeveralLabelsIsNotAReranker) {
  Start({"contradiction", "entailment", "neutral"});
  pb::RerankResponse response;
  const grpc::Status status = Call(Request({"a"}), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("contradiction, entailment, neutral"));
}

TEST_F(RerankTest, MetricsAndTheAccessLogCountEveryWindowOfTheCall) {
  std::ostringstream log;
  Start({"LABEL_0"}, &log);
  pb::RerankRequest request = Request({"Short.", "A rather longer document about the tower in Paris and its engineer."});
  request.set_request_id("r-log");
  request.set_max_length(Length(request.query(), "") + 4);  // 4 tokens of document per window.
  request.mutable_long_input()->set_mode(pb::LongInput::MODE_WINDOWS);
  pb::RerankResponse response;
  ASSERT_TRUE(Call(request, &response).ok());
  const int sequences = response.results(0).num_windows() + response.results(1).num_windows();
  ASSERT_GT(sequences, 2);
  const std::string metrics =
      prometheus::TextSerializer().Serialize(server_->server->metrics().registry()->Collect());
  EXPECT_THAT(metrics, HasSubstr("\ndeberta_requests_total{code=\"OK\",endpoint=\"rerank\",model=\"fake\",protocol=\"grpc\",version=\"1\"} 1\n"));
  server_.reset();  // Every line written.
  const std::vector<std::string> lines = absl::StrSplit(log.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u) << log.str();
  const nlohmann::json line = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(line["method"], "rerank");
  EXPECT_EQ(line["request_id"], "r-log");
  EXPECT_EQ(line["sequences"], sequences);
}

// A call that ends while its first windows are in the engine (its deadline
// passes: the server sees that on its own clock, unlike a client's cancel,
// whose arrival nothing observable marks) drops the windows still queued.
TEST_F(RerankTest, ACallThatEndsDropsItsRemainingWindows) {
  Start();
  const std::string document =
      "The tower was named after the engineer whose company designed it, and it was built for the world's fair "
      "held in Paris in the spring of the year the revolution turned one hundred.";
  pb::RerankRequest request = Request({document});
  request.set_max_length(Length(request.query(), "") + 10);
  request.mutable_long_input()->set_mode(pb::LongInput::MODE_WINDOWS);
  const int windows = (Length(request.query(), document) - Length(request.query(), "") + 9) / 10;
  ASSERT_GT(windows, 4);  // More than one batch of 4.
  fake_->Block();
  auto context = ContextWithDeadline(0.2);
  const absl::Time client_deadline = absl::Now() + absl::Milliseconds(200);
  pb::RerankResponse response;
  grpc::Status status;
  absl::Notification answered;
  server_->stub->async()->Rerank(context.get(), &request, &response, [&](grpc::Status s) {
    status = std::move(s);
    answered.Notify();
  });
  fake_->AwaitBlockedBatch();  // The first 4 windows are inside the engine.
  answered.WaitForNotification();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The server's deadline is the client's plus the request's flight time.
  ASSERT_TRUE(Eventually([&] { return absl::Now() > client_deadline + absl::Milliseconds(100); }));
  fake_->Unblock();
  std::string metrics;
  ASSERT_TRUE(Eventually([&] {
    metrics = prometheus::TextSerializer().Serialize(server_->server->metrics().registry()->Collect());
    return metrics.find("deberta_requests_total{code=\"DEADLINE_EXCEEDED\",endpoint=\"rerank\",model=\"fake\",protocol=\"grpc\",version=\"1\"} 1") !=
           std::string::npos;
  })) << metrics;
  // The batch that was running finished; no later window of the call ran.
  size_t run = 0;
  for (const std::vector<size_t>& batch : fake_->BatchLengths()) run += batch.size();
  EXPECT_EQ(run, 4u);
}

}  // namespace
}  // namespace deberta::testing
