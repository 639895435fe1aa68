// Engine replicas behind one batcher (--replicas): batches run at once on
// different replicas, each replica initializes on its own thread, a failed
// replica fails the start, Stop runs what is queued and joins them all,
// per-replica metrics; then the same through a real server and a real gRPC
// client. FakeEngines and a FakeClock; no sleeps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "service/batcher.h"
#include "service/engine_task.h"
#include "service/metrics.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/fake_engine.h"
#include "tests/testing/http_get.h"
#include "tests/testing/pending_call.h"
#include "tests/testing/test_server.h"

namespace deberta::service {
namespace {

using ::deberta::testing::FakeClock;
using ::deberta::testing::FakeEngine;
using ::testing::HasSubstr;

// What one scheduled sequence came to.
struct ReplicaOutcome {
  absl::Notification done;
  std::atomic<int> calls{0};
  absl::Status status;
};

class ReplicasTest : public ::testing::Test {
 protected:
  // A batcher over `count` fresh FakeEngines, each batch one sequence.
  void Create(int count, ServiceMetrics* metrics = nullptr) {
    options_.max_batch_size = 1;
    options_.batch_timeout = absl::ZeroDuration();
    std::vector<model::Engine*> engines;
    for (int r = 0; r < count; ++r) {
      engines_.push_back(std::make_unique<FakeEngine>());
      engines.push_back(engines_.back().get());
    }
    batcher_ = std::make_unique<Batcher>(options_, engines, &clock_, metrics);
  }

  void TearDown() override {
    if (batcher_) batcher_->Stop();
    for (const auto& outcome : scheduled_) EXPECT_EQ(outcome->calls.load(), 1);
  }

  // Schedules one classify request of one sequence.
  absl::Status Schedule(int32_t id, std::shared_ptr<ReplicaOutcome>* outcome = nullptr) {
    auto result = std::make_shared<ReplicaOutcome>();
    model::Sequence sequence;
    sequence.token_ids = {id, 7, 7};
    auto task = std::make_unique<ClassifyTask>(std::move(sequence), /*write=*/nullptr);
    task->done = [result](const absl::Status& status, TaskTiming) {
      result->status = status;
      result->calls.fetch_add(1);
      result->done.Notify();
    };
    std::vector<std::unique_ptr<BatchTask>> tasks;
    tasks.push_back(std::move(task));
    absl::Status status = batcher_->Schedule(std::move(tasks));
    if (status.ok()) scheduled_.push_back(result);
    if (outcome) *outcome = result;
    return status;
  }

  FakeEngine& engine(int r) { return *engines_[r]; }

  // Blocks both engines of a two-replica batcher and schedules two
  // requests, then waits until each replica holds one inside its engine:
  // with one executor the second could not start while the first is held.
  void HoldOneBatchInEachReplica(std::shared_ptr<ReplicaOutcome> held[2]) {
    engine(0).Block();
    engine(1).Block();
    ASSERT_TRUE(Schedule(1, &held[0]).ok());
    ASSERT_TRUE(Schedule(2, &held[1]).ok());
    engine(0).AwaitBlockedBatch();
    engine(1).AwaitBlockedBatch();
  }

  Batcher::Options options_;
  FakeClock clock_;
  std::vector<std::unique_ptr<FakeEngine>> engines_;
  std::unique_ptr<Batcher> batcher_;
  std::vector<std::shared_ptr<ReplicaOutcome>> scheduled_;
};

TEST_F(ReplicasTest, TwoReplicasRunTwoBatchesAtOnce) {
  Create(2);
  ASSERT_TRUE(batcher_->Start().ok());
  std::shared_ptr<ReplicaOutcome> held[2];
  HoldOneBatchInEachReplica(held);
  engine(0).Unblock();
  engine(1).Unblock();
  for (const auto& outcome : held) {
    outcome->done.WaitForNotification();
    EXPECT_TRUE(outcome->status.ok()) << outcome->status;
  }
  EXPECT_EQ(engine(0).batches_run(), 1);
  EXPECT_EQ(engine(1).batches_run(), 1);
}

TEST_F(ReplicasTest, AnIdleReplicaTakesTheWorkWhileAnotherIsBusy) {
  Create(2);
  ASSERT_TRUE(batcher_->Start().ok());
  std::shared_ptr<ReplicaOutcome> held[2];
  HoldOneBatchInEachReplica(held);
  engine(1).Unblock();  // Replica 0 stays busy: replica 1 runs every later batch.
  std::vector<std::shared_ptr<ReplicaOutcome>> later(3);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Schedule(10 + i, &later[i]).ok());
  for (const auto& outcome : later) {
    outcome->done.WaitForNotification();
    EXPECT_TRUE(outcome->status.ok()) << outcome->status;
  }
  EXPECT_EQ(engine(1).batches_run(), 4);
  EXPECT_EQ(engine(0).batches_run(), 1);
  // Replica 0's batch is still held inside it (it is blocked), so exactly
  // one of the first two is answered.
  EXPECT_NE(held[0]->done.HasBeenNotified(), held[1]->done.HasBeenNotified());
  engine(0).Unblock();
  for (const auto& outcome : held) {
    outcome->done.WaitForNotification();
    EXPECT_TRUE(outcome->status.ok()) << outcome->status;
  }
}

TEST_F(ReplicasTest, EachReplicaInitializesOnItsOwnThreadBeforeItsFirstBatch) {
  Create(3);
  ASSERT_TRUE(batcher_->Start().ok());
  std::vector<std::thread::id> threads;
  for (int r = 0; r < 3; ++r) {
    threads.push_back(engine(r).initialized_thread());
    EXPECT_NE(threads.back(), std::thread::id()) << "replica " << r << " was not initialized";
    EXPECT_NE(threads.back(), std::this_thread::get_id());
    EXPECT_EQ(engine(r).batches_before_initialization(), 0);
  }
  EXPECT_NE(threads[0], threads[1]);
  EXPECT_NE(threads[1], threads[2]);
  EXPECT_NE(threads[0], threads[2]);
}

TEST_F(ReplicasTest, OneReplicaFailingToInitializeFailsTheStartAndNamesIt) {
  Create(2);
  engine(1).FailInitializationWith(absl::FailedPreconditionError("no device"));
  absl::Status started = batcher_->Start();
  EXPECT_TRUE(absl::IsFailedPrecondition(started)) << started;
  EXPECT_THAT(started.message(), HasSubstr("replica 1 of 2: no device"));
  absl::Status refused = Schedule(1);
  EXPECT_TRUE(absl::IsUnavailable(refused)) << refused;
  batcher_->Stop();  // Joins nothing: the start already ended every executor.
  EXPECT_EQ(engine(0).batches_run(), 0);
}

TEST_F(ReplicasTest, StopRunsEveryQueuedTaskAndJoinsEveryReplica) {
  Create(2);
  ASSERT_TRUE(batcher_->Start().ok());
  std::shared_ptr<ReplicaOutcome> held[2];
  HoldOneBatchInEachReplica(held);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(Schedule(10 + i).ok());
  EXPECT_EQ(batcher_->QueuedTasks(Endpoint::kClassify), 6u);
  std::thread stopper([this] { batcher_->Stop(); });
  // Stop refuses new work at once, while both replicas are still held (a
  // task accepted before it took effect is run like the others).
  while (Schedule(99).ok()) std::this_thread::yield();
  engine(0).Unblock();
  engine(1).Unblock();
  stopper.join();  // Returns only once every executor has ended.
  for (const auto& outcome : scheduled_) {
    EXPECT_TRUE(outcome->done.HasBeenNotified());
    EXPECT_TRUE(outcome->status.ok()) << outcome->status;
  }
  EXPECT_EQ(engine(0).batches_run() + engine(1).batches_run(), static_cast<int>(scheduled_.size()));
}

TEST_F(ReplicasTest, ExportsBatchesBusyTimeAndDeviceMemoryPerReplica) {
  auto registry = std::make_shared<prometheus::Registry>();
  ServiceMetrics metrics(registry);
  Create(2, &metrics);
  ASSERT_TRUE(batcher_->Start().ok());
  engine(0).ReportDeviceMemory(model::DeviceMemoryUse{1 << 20, 2 << 20});
  engine(1).ReportDeviceMemory(model::DeviceMemoryUse{3 << 20, 4 << 20});
  std::shared_ptr<ReplicaOutcome> held[2];
  HoldOneBatchInEachReplica(held);
  clock_.AdvanceBy(absl::Seconds(3));  // Both batches take 3 s.
  engine(0).Unblock();
  engine(1).Unblock();
  for (const auto& outcome : held) outcome->done.WaitForNotification();
  batcher_->Stop();  // The metrics of a batch are recorded after its answers.
  const std::string text = prometheus::TextSerializer().Serialize(registry->Collect());
  for (const char* replica : {"0", "1"}) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("deberta_replica_batches_total{replica=\"", replica, "\"} 1\n")));
    EXPECT_THAT(text, HasSubstr(absl::StrCat("deberta_replica_busy_seconds_total{replica=\"", replica, "\"} 3\n")));
  }
  EXPECT_THAT(text, HasSubstr("deberta_device_memory_allocated_bytes{replica=\"0\"} 1048576\n"));
  EXPECT_THAT(text, HasSubstr("deberta_device_memory_reserved_bytes{replica=\"1\"} 4194304\n"));
}

// Through the server: two replicas answer two concurrent calls at once,
// and /metrics counts each replica's batch.
TEST(ReplicaServerTest, TwoReplicasAnswerTwoConcurrentCalls) {
  auto first = std::make_unique<FakeEngine>();
  auto second = std::make_unique<FakeEngine>();
  FakeEngine* engines[] = {first.get(), second.get()};
  for (FakeEngine* engine : engines) engine->Block();
  std::vector<std::unique_ptr<model::Engine>> replicas;
  replicas.push_back(std::move(first));
  replicas.push_back(std::move(second));
  ServerConfig config;
  config.metrics_port = 0;
  config.batcher.max_batch_size = 1;  // Else both calls may share one batch.
  auto server = testing::StartTestServer(std::move(replicas), config);
  ASSERT_TRUE(server.ok()) << server.status();
  testing::PendingCall calls[2];
  calls[0].Start((*server)->stub.get(), 11);
  calls[1].Start((*server)->stub.get(), 12);
  for (FakeEngine* engine : engines) engine->AwaitBlockedBatch();
  for (FakeEngine* engine : engines) engine->Unblock();
  for (testing::PendingCall& call : calls) {
    grpc::Status status = call.Wait();
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(call.response.results_size(), 1);
  }
  // FakeEngine's first logit is the sequence's first token: each call got
  // its own answer, whichever replica ran it.
  EXPECT_EQ(calls[0].response.results(0).logits(0), 11);
  EXPECT_EQ(calls[1].response.results(0).logits(0), 12);
  // A batch's metrics are recorded just after its answers.
  const int port = (*server)->server->metrics_port();
  EXPECT_TRUE(testing::Eventually([port] {
    auto text = testing::HttpGet(port, "/metrics");
    return text.ok() &&
           absl::StrContains(*text, "deberta_replica_batches_total{model=\"fake\",replica=\"0\",version=\"1\"} 1\n") &&
           absl::StrContains(*text, "deberta_replica_batches_total{model=\"fake\",replica=\"1\",version=\"1\"} 1\n");
  }));
}

TEST(ReplicaServerTest, ReplicasOfDifferentModelsDoNotStart) {
  auto second = std::make_unique<FakeEngine>();
  second->mutable_info()->vocab_size = 200;
  second->mutable_info()->name = "other";
  std::vector<std::unique_ptr<model::Engine>> replicas;
  replicas.push_back(std::make_unique<FakeEngine>());
  replicas.push_back(std::move(second));
  auto server = testing::StartTestServer(std::move(replicas), ServerConfig());
  ASSERT_FALSE(server.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(server.status())) << server.status();
  EXPECT_THAT(server.status().message(), HasSubstr("replica 1 (other, float32) is not the same model as replica 0"));
}

}  // namespace
}  // namespace deberta::service
