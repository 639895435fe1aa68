// Batcher on a FakeEngine and a FakeClock: formation by length, token
// budget, timeout flush, deadlines, cancellation, queue full, engine
// failure, ordering, endpoints, drain on Stop, metrics. No sleeps: "not
// yet" is checked while the executor is provably waiting on the fake clock.
#include "service/batcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"
#include "service/metrics.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/fake_engine.h"

namespace deberta::service {
namespace {

using ::deberta::testing::FakeClock;
using ::deberta::testing::FakeEngine;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// What one scheduled sequence came to.
struct Outcome {
  absl::Notification done;
  std::atomic<int> calls{0};
  absl::Status status;
  TaskResult result;
};

// One sequence of `length` tokens whose first id is `id` (ids label the
// sequences in the engine's record).
std::vector<int32_t> Tokens(int32_t id, size_t length) {
  std::vector<int32_t> tokens(length, 7);
  tokens.front() = id;
  return tokens;
}

class BatcherTest : public ::testing::Test {
 protected:
  void Start(ServiceMetrics* metrics = nullptr) {
    batcher_ = std::make_unique<Batcher>(options_, &engine_, &clock_, metrics);
  }

  void TearDown() override {
    if (batcher_) batcher_->Stop();
    // The ownership contract: `done` runs exactly once iff Schedule was OK.
    for (const auto& [outcome, scheduled] : expectations_) {
      EXPECT_EQ(outcome->calls.load(), scheduled ? 1 : 0);
    }
  }

  // Schedules one request (one task per sequence) and records what the
  // contract promises for its outcomes.
  absl::Status ScheduleTask(TaskKind kind, const std::vector<std::vector<int32_t>>& sequences,
                            std::vector<std::shared_ptr<Outcome>>* outcomes,
                            absl::Time deadline = absl::InfiniteFuture(),
                            std::function<bool()> is_cancelled = {}) {
    std::vector<std::unique_ptr<BatchTask>> tasks;
    std::vector<std::shared_ptr<Outcome>> added;
    for (const auto& tokens : sequences) {
      auto outcome = std::make_shared<Outcome>();
      auto task = std::make_unique<BatchTask>();
      task->kind = kind;
      task->input.sequence.token_ids = tokens;
      task->input.positions = {1};
      task->input.top_k = 2;
      task->deadline = deadline;
      task->is_cancelled = is_cancelled;
      task->done = [outcome](const absl::Status& status, TaskResult result) {
        outcome->status = status;
        outcome->result = std::move(result);
        outcome->calls.fetch_add(1);
        outcome->done.Notify();
      };
      tasks.push_back(std::move(task));
      added.push_back(outcome);
    }
    absl::Status status = batcher_->Schedule(std::move(tasks));
    for (auto& outcome : added) {
      expectations_.emplace_back(outcome, status.ok());
      if (outcomes) outcomes->push_back(outcome);
    }
    return status;
  }

  // Schedules one request, expects OK, and waits until every sequence is done.
  std::vector<std::shared_ptr<Outcome>> RunRequest(TaskKind kind,
                                                   const std::vector<std::vector<int32_t>>& sequences) {
    std::vector<std::shared_ptr<Outcome>> outcomes;
    absl::Status status = ScheduleTask(kind, sequences, &outcomes);
    EXPECT_TRUE(status.ok()) << status;
    if (status.ok()) AwaitAll(outcomes);
    return outcomes;
  }

  static void AwaitAll(const std::vector<std::shared_ptr<Outcome>>& outcomes) {
    for (const auto& outcome : outcomes) outcome->done.WaitForNotification();
  }

  Batcher::Options options_;
  FakeEngine engine_;
  FakeClock clock_;
  std::unique_ptr<Batcher> batcher_;
  std::vector<std::pair<std::shared_ptr<Outcome>, bool>> expectations_;
};

TEST_F(BatcherTest, FormsBatchesOfSimilarLength) {
  options_.max_batch_size = 2;
  options_.batch_timeout = absl::Hours(1);
  Start();
  RunRequest(TaskKind::kClassify, {Tokens(1, 10), Tokens(2, 50), Tokens(3, 12), Tokens(4, 52)});
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1, 3), ElementsAre(2, 4)));
}

TEST_F(BatcherTest, FirstComeFormationKeepsArrivalOrder) {
  options_.max_batch_size = 2;
  options_.batch_timeout = absl::Hours(1);
  options_.length_aware = false;
  Start();
  RunRequest(TaskKind::kClassify, {Tokens(1, 10), Tokens(2, 50), Tokens(3, 12), Tokens(4, 52)});
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1, 2), ElementsAre(3, 4)));
}

TEST_F(BatcherTest, PaddedTokenBudgetSplitsBatches) {
  options_.max_batch_size = 8;
  options_.max_batch_tokens = 100;  // 2 x 40 fits, 3 x 40 does not.
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  RunRequest(TaskKind::kClassify, {Tokens(1, 40), Tokens(2, 40), Tokens(3, 40), Tokens(4, 40)});
  EXPECT_THAT(engine_.BatchLengths(), ElementsAre(ElementsAre(40, 40), ElementsAre(40, 40)));
}

TEST_F(BatcherTest, FlushesPartialBatchAtTimeout) {
  options_.max_batch_size = 8;
  options_.batch_timeout = absl::Milliseconds(10);
  Start();
  const absl::Time start = clock_.Now();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  // The executor now sleeps until the flush time: nothing may have run.
  clock_.AwaitWaiter(start + absl::Milliseconds(10));
  EXPECT_EQ(engine_.batches_run(), 0);
  EXPECT_FALSE(outcomes[0]->done.HasBeenNotified());
  clock_.AdvanceBy(absl::Milliseconds(10));
  AwaitAll(outcomes);
  EXPECT_TRUE(outcomes[0]->status.ok());
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1)));
}

TEST_F(BatcherTest, FullBatchRunsBeforeTimeout) {
  options_.max_batch_size = 2;
  options_.batch_timeout = absl::Hours(1);
  Start();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(2, 5)}, &outcomes).ok());
  AwaitAll(outcomes);  // The fake clock never moved.
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1, 2)));
}

TEST_F(BatcherTest, DropsTaskWhoseDeadlinePassedWhileQueued) {
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  engine_.Block();
  std::vector<std::shared_ptr<Outcome>> first, late;
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(1, 5)}, &first).ok());
  engine_.AwaitBlockedBatch();
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(2, 5)}, &late,
                           clock_.Now() + absl::Milliseconds(5))
                  .ok());
  clock_.AdvanceBy(absl::Milliseconds(6));
  engine_.Unblock();
  AwaitAll(first);
  AwaitAll(late);
  EXPECT_TRUE(first[0]->status.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(late[0]->status)) << late[0]->status;
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1)));
}

TEST_F(BatcherTest, DropsCancelledTaskBeforeCompute) {
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  engine_.Block();
  std::vector<std::shared_ptr<Outcome>> first, cancelled;
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(1, 5)}, &first).ok());
  engine_.AwaitBlockedBatch();
  auto gone = std::make_shared<std::atomic<bool>>(false);
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(2, 5)}, &cancelled,
                           absl::InfiniteFuture(), [gone] { return gone->load(); })
                  .ok());
  gone->store(true);
  engine_.Unblock();
  AwaitAll(cancelled);
  EXPECT_TRUE(absl::IsCancelled(cancelled[0]->status)) << cancelled[0]->status;
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1)));
}

TEST_F(BatcherTest, FullQueueRejectsWholeRequestAtOnce) {
  options_.batch_timeout = absl::ZeroDuration();
  options_.max_enqueued_tasks = 3;
  Start();
  engine_.Block();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  engine_.AwaitBlockedBatch();  // Queue empty again, executor busy.
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(2, 5), Tokens(3, 5)}, &outcomes).ok());
  // Two sequences do not fit in the one free slot: none is queued.
  absl::Status full = ScheduleTask(TaskKind::kClassify, {Tokens(4, 5), Tokens(5, 5)}, nullptr);
  EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
  EXPECT_THAT(full.message(), HasSubstr("queue is full"));
  EXPECT_EQ(batcher_->QueuedTasks(TaskKind::kClassify), 2u);
  // The other endpoint has its own queue.
  EXPECT_TRUE(ScheduleTask(TaskKind::kFillMask, {Tokens(6, 5)}, &outcomes).ok());
  engine_.Unblock();
  AwaitAll(outcomes);
  for (const auto& outcome : outcomes) EXPECT_TRUE(outcome->status.ok());
}

TEST_F(BatcherTest, EngineFailureFailsEveryTaskOfTheBatchAndBatcherGoesOn) {
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  engine_.FailWith(absl::InternalError("device on fire"));
  auto failed = RunRequest(TaskKind::kClassify, {Tokens(1, 5), Tokens(2, 6)});
  for (const auto& outcome : failed) {
    EXPECT_TRUE(absl::IsInternal(outcome->status));
    EXPECT_THAT(outcome->status.message(), HasSubstr("device on fire"));
  }
  engine_.FailWith(absl::OkStatus());
  auto later = RunRequest(TaskKind::kClassify, {Tokens(3, 5)});
  EXPECT_TRUE(later[0]->status.ok());
}

TEST_F(BatcherTest, EachResultReachesItsOwnTaskWhenBatchesReorder) {
  options_.max_batch_size = 2;
  options_.batch_timeout = absl::Hours(1);
  Start();
  auto outcomes =
      RunRequest(TaskKind::kClassify, {Tokens(11, 50), Tokens(12, 10), Tokens(13, 48), Tokens(14, 12)});
  ASSERT_EQ(engine_.batches_run(), 2);
  // FakeEngine's first logit is the first token id, its second the length.
  const std::vector<std::pair<float, float>> expected{{11, 50}, {12, 10}, {13, 48}, {14, 12}};
  for (size_t i = 0; i < outcomes.size(); ++i) {
    ASSERT_TRUE(outcomes[i]->status.ok());
    EXPECT_EQ(outcomes[i]->result.classify.logits[0], expected[i].first) << i;
    EXPECT_EQ(outcomes[i]->result.classify.logits[1], expected[i].second) << i;
  }
}

TEST_F(BatcherTest, BatchesNeverMixEndpointsAndAlternateBetweenThem) {
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  engine_.Block();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  engine_.AwaitBlockedBatch();
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(2, 5)}, &outcomes).ok());
  ASSERT_TRUE(ScheduleTask(TaskKind::kFillMask, {Tokens(3, 5)}, &outcomes).ok());
  engine_.Unblock();
  AwaitAll(outcomes);
  EXPECT_THAT(engine_.BatchesByFirstToken(),
              ElementsAre(ElementsAre(1), ElementsAre(3), ElementsAre(2)));
  const model::FillMaskOutput& fill = outcomes[2]->result.fill_mask;
  ASSERT_EQ(fill.predictions.size(), 1u);
  EXPECT_EQ(fill.predictions[0].position, 1);
  EXPECT_EQ(fill.predictions[0].candidates.size(), 2u);
}

TEST_F(BatcherTest, StopRunsQueuedWorkThenRefusesNewWork) {
  options_.batch_timeout = absl::Hours(1);
  Start();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  batcher_->Stop();
  ASSERT_TRUE(outcomes[0]->done.HasBeenNotified());
  EXPECT_TRUE(outcomes[0]->status.ok());
  absl::Status after = ScheduleTask(TaskKind::kClassify, {Tokens(2, 5)}, nullptr);
  EXPECT_TRUE(absl::IsUnavailable(after)) << after;
}

TEST_F(BatcherTest, DrainingRunsPartialBatchesWithoutWaitingForTimeout) {
  options_.max_batch_size = 8;
  options_.batch_timeout = absl::Hours(1);
  Start();
  const absl::Time start = clock_.Now();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  clock_.AwaitWaiter(start + absl::Hours(1));
  batcher_->StartDraining();
  AwaitAll(outcomes);  // The fake clock never moved.
  EXPECT_TRUE(outcomes[0]->status.ok());
  // Still accepting while draining; the executor goes idle, not busy.
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(2, 5)}, &outcomes).ok());
  AwaitAll(outcomes);
  clock_.AwaitWaiter(absl::InfiniteFuture());
  EXPECT_EQ(engine_.batches_run(), 2);
}

TEST_F(BatcherTest, RunsExecutorWorkOnTheExecutorThreadBeforeTheNextBatch) {
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  engine_.Block();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  engine_.AwaitBlockedBatch();
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(2, 5)}, &outcomes).ok());
  std::thread::id work_thread;
  int batches_before_work = -1;
  absl::Notification work_done;
  batcher_->RunOnExecutor([&] {
    work_thread = std::this_thread::get_id();
    batches_before_work = engine_.batches_run();
    work_done.Notify();
  });
  engine_.Unblock();
  AwaitAll(outcomes);
  work_done.WaitForNotification();
  EXPECT_NE(work_thread, std::this_thread::get_id());
  EXPECT_EQ(batches_before_work, 1);  // Ran before the queued batch of 2.
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1), ElementsAre(2)));
}

TEST_F(BatcherTest, RecordsRealAndPaddingTokensAndRejections) {
  auto registry = std::make_shared<prometheus::Registry>();
  ServiceMetrics metrics(registry);
  options_.batch_timeout = absl::Hours(1);
  options_.max_batch_size = 2;
  options_.max_enqueued_tasks = 2;
  Start(&metrics);
  std::vector<std::shared_ptr<Outcome>> outcomes;
  EXPECT_TRUE(absl::IsResourceExhausted(
      ScheduleTask(TaskKind::kClassify, {Tokens(1, 1), Tokens(2, 1), Tokens(3, 1)}, nullptr)));
  ASSERT_TRUE(ScheduleTask(TaskKind::kClassify, {Tokens(1, 10), Tokens(2, 20)}, &outcomes).ok());
  AwaitAll(outcomes);
  const std::string text = prometheus::TextSerializer().Serialize(registry->Collect());
  EXPECT_THAT(text, HasSubstr("deberta_real_tokens_total{endpoint=\"classify\"} 30"));
  EXPECT_THAT(text, HasSubstr("deberta_padding_tokens_total{endpoint=\"classify\"} 10"));
  EXPECT_THAT(text, HasSubstr("deberta_rejections_total{reason=\"queue_full\"} 1"));
  EXPECT_THAT(text, HasSubstr("deberta_batch_size_count{endpoint=\"classify\"} 1"));
}

}  // namespace
}  // namespace deberta::service
