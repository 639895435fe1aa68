// The server over a FakeEngine on loopback: the handlers' answers and codes,
// the request metrics counted against the requests made, and calls whose
// client is gone (never computed when still queued, never counted as OK).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <regex>

#include "absl/strings/str_cat.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/pending_call.h"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

void SetIds(google::protobuf::RepeatedField<int32_t>* ids, std::vector<int32_t> values) {
  ids->Add(values.begin(), values.end());
}

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FakeServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto engine = std::make_unique<FakeEngine>();
    fake_ = engine.get();
    service::ServerConfig config;
    config.service.special_tokens.mask = 4;
    config.service.requests.max_sequences_per_request = 4;
    auto server = StartTestServer(std::move(engine), config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    warm_up_batches_ = fake_->batches_run();
  }

  // The value of one metric sample line ("name{labels}"), or -1.
  double Metric(const std::string& series) const {
    const std::string text =
        prometheus::TextSerializer().Serialize(server_->server->metrics().registry()->Collect());
    const std::string line = absl::StrCat("\n", series, " ");
    const size_t at = text.find(line);
    return at == std::string::npos ? -1 : std::stod(text.substr(at + line.size()));
  }

  grpc::Status Classify(const pb::ClassifyRequest& request, pb::ClassifyResponse* response) {
    auto context = ContextWithDeadline();
    return server_->stub->Classify(context.get(), request, response);
  }

  FakeEngine* fake_ = nullptr;
  std::unique_ptr<TestServer> server_;
  int warm_up_batches_ = 0;
};

TEST_F(FakeServerTest, AnswersEachSequenceInOrderWithSortedLabels) {
  pb::ClassifyRequest request = OneSequence(30);
  SetIds(request.add_sequences()->mutable_token_ids(), {9, 8, 1});
  request.set_top_k(2);
  request.set_request_id("r1");
  pb::ClassifyResponse response;
  ASSERT_TRUE(Classify(request, &response).ok());
  EXPECT_EQ(response.request_id(), "r1");
  ASSERT_EQ(response.results_size(), 2);
  // FakeEngine's logits: first token, length, last token.
  EXPECT_THAT(response.results(0).logits(), ElementsAre(30, 4, 7));
  EXPECT_THAT(response.results(1).logits(), ElementsAre(9, 3, 1));
  ASSERT_EQ(response.results(0).labels_size(), 2);
  EXPECT_EQ(response.results(0).labels(0).label_id(), 0);
  EXPECT_EQ(response.results(0).labels(1).label_id(), 2);
}

TEST_F(FakeServerTest, CountsEveryRequestByEndpointAndCode) {
  pb::ClassifyResponse response;
  ASSERT_TRUE(Classify(OneSequence(10), &response).ok());
  pb::ClassifyRequest two = OneSequence(11);
  SetIds(two.add_sequences()->mutable_token_ids(), {1, 2});
  ASSERT_TRUE(Classify(two, &response).ok());
  pb::ClassifyRequest too_many;
  for (int i = 0; i < 5; ++i) *too_many.add_sequences() = OneSequence(i).sequences(0);
  EXPECT_EQ(Classify(too_many, &response).error_code(), grpc::INVALID_ARGUMENT);
  pb::FillMaskRequest fill;
  SetIds(fill.add_sequences()->mutable_sequence()->mutable_token_ids(), {1, 4, 2});
  pb::FillMaskResponse filled;
  auto context = ContextWithDeadline();
  ASSERT_TRUE(server_->stub->FillMask(context.get(), fill, &filled).ok());

  EXPECT_EQ(Metric(R"(deberta_requests_total{code="OK",endpoint="classify",model="fake",protocol="grpc",version="1"})"), 2);
  EXPECT_EQ(Metric(R"(deberta_requests_total{code="INVALID_ARGUMENT",endpoint="classify",model="fake",protocol="grpc",version="1"})"), 1);
  EXPECT_EQ(Metric(R"(deberta_requests_total{code="OK",endpoint="fill_mask",model="fake",protocol="grpc",version="1"})"), 1);
  EXPECT_EQ(Metric(R"(deberta_requests_total{code="CANCELLED",endpoint="fill_mask",model="fake",protocol="grpc",version="1"})"), 0);
  EXPECT_EQ(Metric(R"(deberta_rejections_total{model="fake",reason="invalid_argument",version="1"})"), 1);
  EXPECT_EQ(Metric(R"(deberta_input_tokens_total{endpoint="classify",model="fake",version="1"})"), 4 + 4 + 2);
  EXPECT_EQ(Metric(R"(deberta_input_tokens_total{endpoint="fill_mask",model="fake",version="1"})"), 3);
  EXPECT_EQ(Metric(R"(deberta_request_duration_seconds_count{endpoint="classify",model="fake",protocol="grpc",version="1"})"), 3);
  EXPECT_EQ(Metric("deberta_inflight_requests"), 0);
}

TEST_F(FakeServerTest, BadRequestsGetPreciseCodesAndTheServerGoesOn) {
  pb::ClassifyResponse response;
  pb::ClassifyRequest empty_sequence = OneSequence(1);
  empty_sequence.add_sequences();
  grpc::Status status = Classify(empty_sequence, &response);
  EXPECT_EQ(status.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("sequence 1: sequence is empty"));
  pb::FillMaskRequest no_mask;
  SetIds(no_mask.add_sequences()->mutable_sequence()->mutable_token_ids(), {1, 9, 2});
  pb::FillMaskResponse filled;
  auto context = ContextWithDeadline();
  status = server_->stub->FillMask(context.get(), no_mask, &filled);
  EXPECT_EQ(status.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("sequence 0: no mask token (id 4)"));
  EXPECT_EQ(fake_->batches_run(), warm_up_batches_);  // Nothing bad reached the engine.
  EXPECT_TRUE(Classify(OneSequence(2), &response).ok());
}

TEST_F(FakeServerTest, ACallWhoseDeadlinePassesWhileQueuedIsNeverComputed) {
  fake_->Block();
  PendingCall running;
  running.Start(server_->stub.get(), 11);
  fake_->AwaitBlockedBatch();
  pb::ClassifyResponse response;
  auto context = ContextWithDeadline(0.2);
  const absl::Time client_deadline = absl::Now() + absl::Milliseconds(200);
  grpc::Status late = server_->stub->Classify(context.get(), OneSequence(12), &response);
  EXPECT_EQ(late.error_code(), grpc::DEADLINE_EXCEEDED);
  // The server's deadline is the client's plus the request's flight time.
  ASSERT_TRUE(Eventually([&] { return absl::Now() > client_deadline + absl::Milliseconds(100); }));
  fake_->Unblock();
  EXPECT_TRUE(running.Wait().ok());
  ASSERT_TRUE(Eventually([&] {
    return Metric(R"(deberta_requests_total{code="DEADLINE_EXCEEDED",endpoint="classify",model="fake",protocol="grpc",version="1"})") == 1;
  }));
  EXPECT_EQ(Metric(R"(deberta_rejections_total{model="fake",reason="deadline_exceeded",version="1"})"), 1);
  EXPECT_EQ(Metric(R"(deberta_requests_total{code="OK",endpoint="classify",model="fake",protocol="grpc",version="1"})"), 1);
  const auto batches = fake_->BatchesByFirstToken();
  EXPECT_THAT(std::vector<std::vector<int32_t>>(batches.begin() + warm_up_batches_, batches.end()),
              ElementsAre(ElementsAre(11)));
}

TEST_F(FakeServerTest, ACallWhoseClientLeftDuringComputeIsNotCountedAsOk) {
  fake_->Block();
  pb::ClassifyResponse response;
  auto context = ContextWithDeadline(0.2);
  const absl::Time client_deadline = absl::Now() + absl::Milliseconds(200);
  grpc::Status status;
  absl::Notification answered;
  pb::ClassifyRequest request = OneSequence(21);
  server_->stub->async()->Classify(context.get(), &request, &response, [&](grpc::Status s) {
    status = std::move(s);
    answered.Notify();
  });
  fake_->AwaitBlockedBatch();  // The sequence is inside the engine.
  answered.WaitForNotification();
  EXPECT_EQ(status.error_code(), grpc::DEADLINE_EXCEEDED);
  ASSERT_TRUE(Eventually([&] { return absl::Now() > client_deadline + absl::Milliseconds(100); }));
  fake_->Unblock();
  ASSERT_TRUE(Eventually([&] {
    return Metric(R"(deberta_requests_total{code="DEADLINE_EXCEEDED",endpoint="classify",model="fake",protocol="grpc",version="1"})") == 1;
  }));
  EXPECT_EQ(Metric(R"(deberta_requests_total{code="OK",endpoint="classify",model="fake",protocol="grpc",version="1"})"), 0);
}

}  // namespace
}  // namespace deberta::testing
