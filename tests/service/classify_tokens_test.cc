// ClassifyTokens through a server on the FakeEngine (labels a, b, c; each
// position's logits favour label token_id % 3): token-id input answered
// per token and grouped, without spans and without the special tokens;
// the checks that refuse a request before anything is queued (no token
// head, word-level aggregation or windows on token ids, a max_windows over
// the server's, text without a tokenizer).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/testing/fake_engine.h"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

namespace pb = serving::v1;
using ::testing::HasSubstr;

class ClassifyTokensTest : public ::testing::Test {
 protected:
  void Start(bool token_head = true) {
    auto engine = std::make_unique<FakeEngine>();
    engine->mutable_info()->has_token_classifier = token_head;
    fake_ = engine.get();
    service::ServerConfig config;  // Special tokens: pad 0, [CLS] 1, [SEP] 2.
    config.service.requests.max_windows = 4;
    auto server = StartTestServer(std::move(engine), config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  grpc::Status Call(const pb::ClassifyTokensRequest& request, pb::ClassifyTokensResponse* response) {
    return server_->stub->ClassifyTokens(ContextWithDeadline().get(), request, response);
  }

  static pb::ClassifyTokensRequest Ids(std::initializer_list<int32_t> ids, pb::Aggregation aggregation) {
    pb::ClassifyTokensRequest request;
    request.set_request_id("t");
    *request.add_sequences()->mutable_token_ids() = {ids.begin(), ids.end()};
    request.set_aggregation(aggregation);
    return request;
  }

  FakeEngine* fake_ = nullptr;
  std::unique_ptr<TestServer> server_;
};

TEST_F(ClassifyTokensTest, TokenIdsAreAnsweredPerTokenWithoutSpansOrSpecialTokens) {
  Start();
  pb::ClassifyTokensResponse response;
  ASSERT_TRUE(Call(Ids({1, 4, 5, 7, 2}, pb::AGGREGATION_NONE), &response).ok());
  EXPECT_EQ(response.request_id(), "t");
  ASSERT_EQ(response.results_size(), 1);
  const pb::TokenClassification& result = response.results(0);
  EXPECT_EQ(result.num_tokens(), 5);
  EXPECT_EQ(result.num_windows(), 1);
  ASSERT_EQ(result.entities_size(), 3);  // [CLS] and [SEP] never appear.
  const float top = std::exp(2.0f) / (std::exp(2.0f) + 2);
  EXPECT_EQ(result.entities(0).label(), "b");  // 4 % 3.
  EXPECT_NEAR(result.entities(0).score(), top, 1e-6);
  EXPECT_EQ(result.entities(0).index(), 1);
  EXPECT_EQ(result.entities(0).start(), -1);
  EXPECT_EQ(result.entities(0).word(), "");
  EXPECT_EQ(result.entities(1).label(), "c");
  EXPECT_EQ(result.entities(2).label(), "b");  // 7 % 3.
  EXPECT_EQ(result.entities(2).index(), 3);
}

TEST_F(ClassifyTokensTest, SimpleGroupsAndIgnoreLabelsDropsAfterGrouping) {
  Start();
  pb::ClassifyTokensRequest request = Ids({1, 4, 7, 5, 2}, pb::AGGREGATION_UNSPECIFIED);  // b b c: simple.
  request.add_ignore_labels("c");
  pb::ClassifyTokensResponse response;
  ASSERT_TRUE(Call(request, &response).ok());
  ASSERT_EQ(response.results(0).entities_size(), 1);
  EXPECT_EQ(response.results(0).entities(0).label(), "b");  // One group of the two b tokens.
  EXPECT_EQ(response.results(0).entities(0).index(), -1);
}

TEST_F(ClassifyTokensTest, RefusalsComeBeforeAnyBatch) {
  Start();
  const int batches = fake_->batches_run();
  pb::ClassifyTokensResponse response;
  grpc::Status status = Call(Ids({1, 4, 2}, pb::AGGREGATION_FIRST), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("needs text"));

  pb::ClassifyTokensRequest windows = Ids({1, 4, 2}, pb::AGGREGATION_NONE);
  windows.mutable_long_input()->set_mode(pb::LongInput::MODE_WINDOWS);
  EXPECT_EQ(Call(windows, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  windows.mutable_long_input()->set_max_windows(5);  // The server allows 4.
  status = Call(windows, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("max_windows"));

  pb::ClassifyTokensRequest text;
  text.add_sequences()->set_text("no tokenizer here");
  EXPECT_EQ(Call(text, &response).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(fake_->batches_run(), batches);
}

TEST_F(ClassifyTokensTest, AModelWithoutATokenHeadIsFailedPrecondition) {
  Start(/*token_head=*/false);
  pb::ClassifyTokensResponse response;
  const grpc::Status status = Call(Ids({1, 4, 2}, pb::AGGREGATION_NONE), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("token-classification head"));
}

}  // namespace
}  // namespace deberta::testing
