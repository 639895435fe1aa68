// Sequences above the model's limit: rejected by default (the bad-input
// table), truncated to the limit with --truncate, keeping the final token.
#include <gtest/gtest.h>

#include "tests/testing/test_server.h"
#include "tests/testing/fake_engine.h"

namespace deberta::testing {
namespace {

TEST(TruncationTest, TruncateKeepsTheFirstTokensAndTheLastOne) {
  auto engine = std::make_unique<FakeEngine>();  // Limit: 64 tokens.
  FakeEngine* fake = engine.get();
  service::ServerConfig config;
  config.service.requests.truncate = true;
  auto server = StartTestServer(std::move(engine), config);
  ASSERT_TRUE(server.ok()) << server.status();

  serving::v1::ClassifyRequest request;
  serving::v1::Sequence* sequence = request.add_sequences();
  for (int t = 0; t < 70; ++t) sequence->add_token_ids(t == 69 ? 2 : 9);
  serving::v1::ClassifyResponse response;
  auto context = ContextWithDeadline();
  grpc::Status status = (*server)->stub->Classify(context.get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.results_size(), 1);
  // FakeEngine's logits: first token, length, last token of what it was given.
  EXPECT_EQ(response.results(0).logits(0), 9);
  EXPECT_EQ(response.results(0).logits(1), 64);
  EXPECT_EQ(response.results(0).logits(2), 2);
  EXPECT_EQ(fake->BatchLengths().back(), std::vector<size_t>{64});
}

}  // namespace
}  // namespace deberta::testing
