// The drain, in process on a FakeEngine held mid-batch: health goes
// NOT_SERVING, new work is refused with UNAVAILABLE, accepted work (running
// and queued) finishes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <thread>

#include "absl/strings/match.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/pending_call.h"
#include "tests/testing/test_server.h"

namespace deberta::testing {
namespace {

TEST(DrainTest, RefusesNewWorkAndFinishesAcceptedWork) {
  auto engine = std::make_unique<FakeEngine>();
  FakeEngine* fake = engine.get();
  service::ServerConfig config;
  config.batcher.batch_timeout = absl::ZeroDuration();
  config.batcher.max_batch_size = 1;
  auto server = StartTestServer(std::move(engine), config);
  ASSERT_TRUE(server.ok()) << server.status();
  TestServer& test = **server;

  const size_t warm_up_batches = fake->BatchesByFirstToken().size();
  fake->Block();
  PendingCall running, queued;
  running.Start(test.stub.get(), 11);
  fake->AwaitBlockedBatch();  // 11 is inside the engine,
  queued.Start(test.stub.get(), 12);
  auto metrics_text = [&] {
    return prometheus::TextSerializer().Serialize(test.server->metrics().registry()->Collect());
  };
  // ... and 12 is accepted and queued behind it.
  ASSERT_TRUE(Eventually(
      [&] { return absl::StrContains(metrics_text(), "\ndeberta_queue_sequences{endpoint=\"classify\",model=\"fake\",version=\"1\"} 1\n"); }));

  std::thread shutdown([&] { test.server->Shutdown(); });
  ASSERT_TRUE(Eventually([&] { return absl::StrContains(metrics_text(), "\ndeberta_draining 1\n"); }));
  // New work is refused while accepted work is still running.
  pb::ClassifyResponse refused;
  auto context = ContextWithDeadline(10);
  grpc::Status status = test.stub->Classify(context.get(), OneSequence(13), &refused);
  EXPECT_EQ(status.error_code(), grpc::UNAVAILABLE) << status.error_message();
  EXPECT_EQ(test.HealthStatus(), "NOT_SERVING");

  fake->Unblock();
  EXPECT_TRUE(running.Wait().ok()) << running.status.error_message();
  EXPECT_TRUE(queued.Wait().ok()) << queued.status.error_message();
  shutdown.join();
  std::vector<int32_t> firsts;
  const auto batches = fake->BatchesByFirstToken();
  for (size_t b = warm_up_batches; b < batches.size(); ++b) {
    firsts.insert(firsts.end(), batches[b].begin(), batches[b].end());
  }
  EXPECT_THAT(firsts, ::testing::ElementsAre(11, 12));  // 13 never reached the engine.
}

}  // namespace
}  // namespace deberta::testing
