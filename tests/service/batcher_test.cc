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
#include "service/engine_task.h"
#include "service/metrics.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/fake_engine.h"

namespace deberta::service {
namespace {

using ::deberta::testing::FakeClock;
using ::deberta::testing::FakeEngine;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// What one scheduled sequence came to.
struct Outcome {
  absl::Notification done;
  std::atomic<int> calls{0};
  absl::Status status;
  TaskTiming timing;
  // The engine output, written (with OK) before `done`.
  model::ClassifyOutput classify;
  model::FillMaskOutput fill_mask;
};

// A task of the classify or fill-mask queue (positions {1}, top_k 2) whose
// output goes to `outcome`.
std::unique_ptr<BatchTask> MakeTask(Endpoint endpoint, const std::vector<int32_t>& tokens,
                                    const std::shared_ptr<Outcome>& outcome) {
  model::Sequence sequence;
  sequence.token_ids = tokens;
  if (endpoint == Endpoint::kClassify) {
    return std::make_unique<ClassifyTask>(
        std::move(sequence), [outcome](model::ClassifyOutput output) { outcome->classify = std::move(output); });
  }
  model::MaskedSequence masked;
  masked.sequence = std::move(sequence);
  masked.positions = {1};
  masked.top_k = 2;
  return std::make_unique<FillMaskTask>(
      std::move(masked), [outcome](model::FillMaskOutput output) { outcome->fill_mask = std::move(output); });
}

// A task that must never run: in the classify queue it is another kind
// than ClassifyTask; in an unbatched queue Schedule refuses it.
class NeverRunTask final : public BatchTask {
 public:
  explicit NeverRunTask(Endpoint queue) : BatchTask(queue, &Run) {}
  size_t length() const override { return 5; }

 private:
  static absl::Status Run(model::Engine&, const std::vector<BatchTask*>&, const model::Engine::RowsWanted&) {
    ADD_FAILURE() << "this task must not run";
    return absl::OkStatus();
  }
  void WriteOutput() override {}
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
    ASSERT_TRUE(batcher_->Start().ok());
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
  absl::Status ScheduleTask(Endpoint endpoint, const std::vector<std::vector<int32_t>>& sequences,
                            std::vector<std::shared_ptr<Outcome>>* outcomes,
                            absl::Time deadline = absl::InfiniteFuture(),
                            std::shared_ptr<const Cancellation> cancelled = nullptr) {
    std::vector<std::unique_ptr<BatchTask>> tasks;
    std::vector<std::shared_ptr<Outcome>> added;
    for (const auto& tokens : sequences) {
      auto outcome = std::make_shared<Outcome>();
      std::unique_ptr<BatchTask> task = MakeTask(endpoint, tokens, outcome);
      task->deadline = deadline;
      task->cancelled = cancelled;
      task->done = [outcome](const absl::Status& status, TaskTiming timing) {
        outcome->status = status;
        outcome->timing = timing;
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
  std::vector<std::shared_ptr<Outcome>> RunRequest(Endpoint endpoint,
                                                   const std::vector<std::vector<int32_t>>& sequences) {
    std::vector<std::shared_ptr<Outcome>> outcomes;
    absl::Status status = ScheduleTask(endpoint, sequences, &outcomes);
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
  RunRequest(Endpoint::kClassify, {Tokens(1, 10), Tokens(2, 50), Tokens(3, 12), Tokens(4, 52)});
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1, 3), ElementsAre(2, 4)));
}

TEST_F(BatcherTest, FirstComeFormationKeepsArrivalOrder) {
  options_.max_batch_size = 2;
  options_.batch_timeout = absl::Hours(1);
  options_.length_aware = false;
  Start();
  RunRequest(Endpoint::kClassify, {Tokens(1, 10), Tokens(2, 50), Tokens(3, 12), Tokens(4, 52)});
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1, 2), ElementsAre(3, 4)));
}

TEST_F(BatcherTest, PaddedTokenBudgetSplitsBatches) {
  options_.max_batch_size = 8;
  options_.max_batch_tokens = 100;  // 2 x 40 fits, 3 x 40 does not.
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  RunRequest(Endpoint::kClassify, {Tokens(1, 40), Tokens(2, 40), Tokens(3, 40), Tokens(4, 40)});
  EXPECT_THAT(engine_.BatchLengths(), ElementsAre(ElementsAre(40, 40), ElementsAre(40, 40)));
}

TEST_F(BatcherTest, FlushesPartialBatchAtTimeout) {
  options_.max_batch_size = 8;
  options_.batch_timeout = absl::Milliseconds(10);
  Start();
  const absl::Time start = clock_.Now();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &outcomes).ok());
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
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(2, 5)}, &outcomes).ok());
  AwaitAll(outcomes);  // The fake clock never moved.
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1, 2)));
}

TEST_F(BatcherTest, ABatchThatMixesKindsFailsRatherThanRunOneAsTheOther) {
  options_.max_batch_size = 2;
  options_.batch_timeout = absl::Hours(1);
  Start();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  absl::Notification other_done;
  absl::Status other_status;
  auto other = std::make_unique<NeverRunTask>(Endpoint::kClassify);
  other->done = [&](const absl::Status& status, TaskTiming) {
    other_status = status;
    other_done.Notify();
  };
  std::vector<std::unique_ptr<BatchTask>> tasks;
  tasks.push_back(std::move(other));
  ASSERT_TRUE(batcher_->Schedule(std::move(tasks)).ok());
  AwaitAll(outcomes);
  other_done.WaitForNotification();
  EXPECT_TRUE(absl::IsInternal(outcomes[0]->status)) << outcomes[0]->status;
  EXPECT_TRUE(absl::IsInternal(other_status)) << other_status;
  EXPECT_EQ(engine_.batches_run(), 0);
}

TEST_F(BatcherTest, DropsTaskWhoseDeadlinePassedWhileQueued) {
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  engine_.Block();
  std::vector<std::shared_ptr<Outcome>> first, late;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &first).ok());
  engine_.AwaitBlockedBatch();
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(2, 5)}, &late,
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

TEST_F(BatcherTest, DoesNotStartATaskWhoseDeadlinePassesBeforeItsBatchWouldFinish) {
  options_.max_batch_size = 2;
  options_.batch_timeout = absl::Hours(1);
  Start();
  // A first batch of 10 padded tokens takes one (fake) second.
  engine_.Block();
  std::vector<std::shared_ptr<Outcome>> first, doomed, patient;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5), Tokens(2, 5)}, &first).ok());
  engine_.AwaitBlockedBatch();
  clock_.AdvanceBy(absl::Seconds(1));
  engine_.Unblock();
  AwaitAll(first);
  // The same shape again is estimated at one second: a task due in half of
  // it is answered at once, the other computed.
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(3, 5)}, &doomed, clock_.Now() + absl::Milliseconds(500))
                  .ok());
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(4, 5)}, &patient).ok());
  AwaitAll(doomed);
  AwaitAll(patient);
  EXPECT_TRUE(absl::IsDeadlineExceeded(doomed[0]->status)) << doomed[0]->status;
  EXPECT_THAT(doomed[0]->status.message(), HasSubstr("would pass before the batch finishes"));
  EXPECT_TRUE(patient[0]->status.ok()) << patient[0]->status;
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1, 2), ElementsAre(4)));
}

TEST_F(BatcherTest, DropsCancelledTaskBeforeCompute) {
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  engine_.Block();
  std::vector<std::shared_ptr<Outcome>> first, cancelled;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &first).ok());
  engine_.AwaitBlockedBatch();
  auto gone = std::make_shared<Cancellation>();
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(2, 5)}, &cancelled,
                           absl::InfiniteFuture(), gone)
                  .ok());
  gone->Cancel(clock_.Now());
  engine_.Unblock();
  AwaitAll(cancelled);
  EXPECT_TRUE(absl::IsCancelled(cancelled[0]->status)) << cancelled[0]->status;
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1)));
}

TEST_F(BatcherTest, StopsABatchOnceEveryCallerHasGoneAndDropsTheGoneFromOneWithACallerLeft) {
  options_.max_batch_size = 2;
  options_.batch_timeout = absl::Hours(1);
  auto registry = std::make_shared<prometheus::Registry>();
  ServiceMetrics metrics(registry);
  Start(&metrics);
  auto gone_a = std::make_shared<Cancellation>();
  auto gone_b = std::make_shared<Cancellation>();
  std::vector<std::shared_ptr<Outcome>> abandoned;
  engine_.Block();
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &abandoned, absl::InfiniteFuture(), gone_a).ok());
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(2, 5)}, &abandoned, absl::InfiniteFuture(), gone_b).ok());
  engine_.AwaitBlockedBatch();
  gone_a->Cancel(clock_.Now());  // Both clients leave during inference.
  gone_b->Cancel(clock_.Now());
  clock_.AdvanceBy(absl::Seconds(1));
  engine_.Unblock();
  AwaitAll(abandoned);
  for (const auto& outcome : abandoned) {
    EXPECT_TRUE(absl::IsCancelled(outcome->status)) << outcome->status;
    EXPECT_THAT(outcome->status.message(), HasSubstr("the batch was stopped"));
  }

  auto gone_c = std::make_shared<Cancellation>();
  std::vector<std::shared_ptr<Outcome>> mixed;
  engine_.Block();
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(3, 5)}, &mixed, absl::InfiniteFuture(), gone_c).ok());
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(4, 5)}, &mixed).ok());
  engine_.AwaitBlockedBatch();
  clock_.AdvanceBy(absl::Seconds(1));
  gone_c->Cancel(clock_.Now());  // One leaves halfway; the other still waits for its answer.
  clock_.AdvanceBy(absl::Seconds(1));
  engine_.Unblock();
  AwaitAll(mixed);
  // The one that left is dropped from the batch and answered as cancelled.
  EXPECT_TRUE(absl::IsCancelled(mixed[0]->status)) << mixed[0]->status;
  EXPECT_THAT(mixed[0]->status.message(), HasSubstr("during inference"));
  EXPECT_TRUE(mixed[1]->status.ok()) << mixed[1]->status;
  EXPECT_EQ(engine_.batches_run(), 2);
  // Engine time on callers gone: all of the first batch (1 s), and of the
  // second (2 s, two sequences) the gone one's share after it left (0.5 s).
  const std::string text = prometheus::TextSerializer().Serialize(registry->Collect());
  EXPECT_THAT(text, HasSubstr("deberta_abandoned_inference_seconds_total{endpoint=\"classify\"} 1.5\n"));
}

TEST_F(BatcherTest, ExportsTheEnginesDeviceMemoryAfterEachBatchAndNoneForACpuEngine) {
  options_.batch_timeout = absl::ZeroDuration();
  auto registry = std::make_shared<prometheus::Registry>();
  ServiceMetrics metrics(registry);
  Start(&metrics);
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  AwaitAll(outcomes);
  const std::string cpu = prometheus::TextSerializer().Serialize(registry->Collect());
  EXPECT_THAT(cpu, Not(HasSubstr("deberta_device_memory")));

  engine_.ReportDeviceMemory(model::DeviceMemoryUse{1 << 20, 3 << 20});
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(2, 5)}, &outcomes).ok());
  AwaitAll(outcomes);
  const std::string gpu = prometheus::TextSerializer().Serialize(registry->Collect());
  EXPECT_THAT(gpu, HasSubstr("deberta_device_memory_allocated_bytes{replica=\"0\"} 1048576\n"));
  EXPECT_THAT(gpu, HasSubstr("deberta_device_memory_reserved_bytes{replica=\"0\"} 3145728\n"));
}

TEST_F(BatcherTest, FullQueueRejectsWholeRequestAtOnce) {
  options_.batch_timeout = absl::ZeroDuration();
  options_.max_enqueued_tasks = 3;
  Start();
  engine_.Block();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  engine_.AwaitBlockedBatch();  // Queue empty again, executor busy.
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(2, 5), Tokens(3, 5)}, &outcomes).ok());
  // Two sequences do not fit in the one free slot: none is queued.
  absl::Status full = ScheduleTask(Endpoint::kClassify, {Tokens(4, 5), Tokens(5, 5)}, nullptr);
  EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
  EXPECT_THAT(full.message(), HasSubstr("queue is full"));
  EXPECT_EQ(batcher_->QueuedTasks(Endpoint::kClassify), 2u);
  // The other endpoint has its own queue.
  EXPECT_TRUE(ScheduleTask(Endpoint::kFillMask, {Tokens(6, 5)}, &outcomes).ok());
  engine_.Unblock();
  AwaitAll(outcomes);
  for (const auto& outcome : outcomes) EXPECT_TRUE(outcome->status.ok());
}

TEST_F(BatcherTest, EngineFailureFailsEveryTaskOfTheBatchAndBatcherGoesOn) {
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  engine_.FailWith(absl::InternalError("device on fire"));
  auto failed = RunRequest(Endpoint::kClassify, {Tokens(1, 5), Tokens(2, 6)});
  for (const auto& outcome : failed) {
    EXPECT_TRUE(absl::IsInternal(outcome->status));
    EXPECT_THAT(outcome->status.message(), HasSubstr("device on fire"));
  }
  engine_.FailWith(absl::OkStatus());
  auto later = RunRequest(Endpoint::kClassify, {Tokens(3, 5)});
  EXPECT_TRUE(later[0]->status.ok());
}

TEST_F(BatcherTest, EachResultReachesItsOwnTaskWhenBatchesReorder) {
  options_.max_batch_size = 2;
  options_.batch_timeout = absl::Hours(1);
  Start();
  auto outcomes =
      RunRequest(Endpoint::kClassify, {Tokens(11, 50), Tokens(12, 10), Tokens(13, 48), Tokens(14, 12)});
  ASSERT_EQ(engine_.batches_run(), 2);
  // FakeEngine's first logit is the first token id, its second the length.
  const std::vector<std::pair<float, float>> expected{{11, 50}, {12, 10}, {13, 48}, {14, 12}};
  for (size_t i = 0; i < outcomes.size(); ++i) {
    ASSERT_TRUE(outcomes[i]->status.ok());
    EXPECT_EQ(outcomes[i]->classify.logits[0], expected[i].first) << i;
    EXPECT_EQ(outcomes[i]->classify.logits[1], expected[i].second) << i;
  }
}

TEST_F(BatcherTest, BatchesNeverMixEndpointsAndAlternateBetweenThem) {
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  engine_.Block();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  engine_.AwaitBlockedBatch();
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(2, 5)}, &outcomes).ok());
  ASSERT_TRUE(ScheduleTask(Endpoint::kFillMask, {Tokens(3, 5)}, &outcomes).ok());
  engine_.Unblock();
  AwaitAll(outcomes);
  EXPECT_THAT(engine_.BatchesByFirstToken(),
              ElementsAre(ElementsAre(1), ElementsAre(3), ElementsAre(2)));
  const model::FillMaskOutput& fill = outcomes[2]->fill_mask;
  ASSERT_EQ(fill.predictions.size(), 1u);
  EXPECT_EQ(fill.predictions[0].position, 1);
  EXPECT_EQ(fill.predictions[0].candidates.size(), 2u);
}

TEST_F(BatcherTest, StopRunsQueuedWorkThenRefusesNewWork) {
  options_.batch_timeout = absl::Hours(1);
  Start();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  batcher_->Stop();
  ASSERT_TRUE(outcomes[0]->done.HasBeenNotified());
  EXPECT_TRUE(outcomes[0]->status.ok());
  absl::Status after = ScheduleTask(Endpoint::kClassify, {Tokens(2, 5)}, nullptr);
  EXPECT_TRUE(absl::IsUnavailable(after)) << after;
}

TEST_F(BatcherTest, DrainingRunsPartialBatchesWithoutWaitingForTimeout) {
  options_.max_batch_size = 8;
  options_.batch_timeout = absl::Hours(1);
  Start();
  const absl::Time start = clock_.Now();
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  clock_.AwaitWaiter(start + absl::Hours(1));
  batcher_->StartDraining();
  AwaitAll(outcomes);  // The fake clock never moved.
  EXPECT_TRUE(outcomes[0]->status.ok());
  // Still accepting while draining; the executor goes idle, not busy.
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(2, 5)}, &outcomes).ok());
  AwaitAll(outcomes);
  clock_.AwaitWaiter(absl::InfiniteFuture());
  EXPECT_EQ(engine_.batches_run(), 2);
}

TEST_F(BatcherTest, InitializesTheEngineOnTheExecutorThreadBeforeTheFirstBatch) {
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  // Start returned only after the hook ran, on another thread, before any batch.
  EXPECT_NE(engine_.initialized_thread(), std::thread::id());
  EXPECT_NE(engine_.initialized_thread(), std::this_thread::get_id());
  EXPECT_EQ(engine_.batches_before_initialization(), 0);
  std::vector<std::shared_ptr<Outcome>> outcomes;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &outcomes).ok());
  AwaitAll(outcomes);
  EXPECT_TRUE(outcomes[0]->status.ok());
}

TEST_F(BatcherTest, FailedEngineInitializationFailsStartAndRefusesWork) {
  engine_.FailInitializationWith(absl::InternalError("no device"));
  batcher_ = std::make_unique<Batcher>(options_, &engine_, &clock_, nullptr);
  absl::Status started = batcher_->Start();
  EXPECT_TRUE(absl::IsInternal(started)) << started;
  absl::Status refused = ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, nullptr);
  EXPECT_TRUE(absl::IsUnavailable(refused)) << refused;
  EXPECT_EQ(engine_.batches_run(), 0);
}

TEST_F(BatcherTest, RefusesWorkBeforeStart) {
  batcher_ = std::make_unique<Batcher>(options_, &engine_, &clock_, nullptr);
  absl::Status refused = ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, nullptr);
  EXPECT_TRUE(absl::IsUnavailable(refused)) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("not ready"));
}

TEST_F(BatcherTest, RejectsTasksThatDoNotShareOneBatchedEndpoint) {
  Start();
  std::vector<std::unique_ptr<BatchTask>> tasks;
  for (Endpoint endpoint : {Endpoint::kClassify, Endpoint::kFillMask}) {
    std::unique_ptr<BatchTask> task = MakeTask(endpoint, Tokens(1, 5), std::make_shared<Outcome>());
    task->done = [](const absl::Status&, TaskTiming) { ADD_FAILURE() << "must not run"; };
    tasks.push_back(std::move(task));
  }
  EXPECT_TRUE(absl::IsInvalidArgument(batcher_->Schedule(std::move(tasks))));
  auto info = std::make_unique<NeverRunTask>(Endpoint::kGetModelInfo);
  info->done = [](const absl::Status&, TaskTiming) { ADD_FAILURE() << "must not run"; };
  std::vector<std::unique_ptr<BatchTask>> unbatched;
  unbatched.push_back(std::move(info));
  EXPECT_TRUE(absl::IsInvalidArgument(batcher_->Schedule(std::move(unbatched))));
}

TEST_F(BatcherTest, WakesAtTheEarliestDeadlineAndAnswersItWithoutABatch) {
  options_.max_batch_size = 8;
  options_.batch_timeout = absl::Hours(1);
  Start();
  const absl::Time deadline = clock_.Now() + absl::Milliseconds(5);
  std::vector<std::shared_ptr<Outcome>> waiting, expiring;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &waiting).ok());
  ASSERT_TRUE(ScheduleTask(Endpoint::kFillMask, {Tokens(2, 5)}, &expiring, deadline).ok());
  // The executor sleeps until the deadline, not until the hour-long flush.
  clock_.AwaitWaiter(deadline);
  clock_.AdvanceBy(absl::Milliseconds(5));
  AwaitAll(expiring);
  EXPECT_TRUE(absl::IsDeadlineExceeded(expiring[0]->status)) << expiring[0]->status;
  EXPECT_EQ(engine_.batches_run(), 0);
  EXPECT_FALSE(waiting[0]->done.HasBeenNotified());
  EXPECT_EQ(batcher_->QueuedTasks(Endpoint::kClassify), 1u);
}

TEST_F(BatcherTest, SweepsAbandonedTasksFromEveryQueueBeforeEachBatch) {
  options_.batch_timeout = absl::ZeroDuration();
  Start();
  engine_.Block();
  std::vector<std::shared_ptr<Outcome>> first, cancelled, next;
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 5)}, &first).ok());
  engine_.AwaitBlockedBatch();
  auto gone = std::make_shared<Cancellation>();
  // Queued behind the running classify batch: a fill-mask whose client
  // leaves, and the classify batch that runs next.
  ASSERT_TRUE(ScheduleTask(Endpoint::kFillMask, {Tokens(2, 5)}, &cancelled, absl::InfiniteFuture(), gone).ok());
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(3, 5)}, &next).ok());
  gone->Cancel(clock_.Now());
  engine_.Unblock();
  AwaitAll(cancelled);
  AwaitAll(next);
  EXPECT_TRUE(absl::IsCancelled(cancelled[0]->status)) << cancelled[0]->status;
  EXPECT_EQ(batcher_->QueuedTasks(Endpoint::kFillMask), 0u);
  EXPECT_THAT(engine_.BatchesByFirstToken(), ElementsAre(ElementsAre(1), ElementsAre(3)));
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
      ScheduleTask(Endpoint::kClassify, {Tokens(1, 1), Tokens(2, 1), Tokens(3, 1)}, nullptr)));
  ASSERT_TRUE(ScheduleTask(Endpoint::kClassify, {Tokens(1, 10), Tokens(2, 20)}, &outcomes).ok());
  AwaitAll(outcomes);
  const std::string text = prometheus::TextSerializer().Serialize(registry->Collect());
  EXPECT_THAT(text, HasSubstr("deberta_real_tokens_total{endpoint=\"classify\"} 30"));
  EXPECT_THAT(text, HasSubstr("deberta_padding_tokens_total{endpoint=\"classify\"} 10"));
  EXPECT_THAT(text, HasSubstr("deberta_rejections_total{reason=\"queue_full\"} 1"));
  // Every reason's series exists from the start, at zero until it happens.
  EXPECT_THAT(text, HasSubstr("deberta_rejections_total{reason=\"failed_precondition\"} 0"));
  EXPECT_THAT(text, HasSubstr("deberta_batch_size_count{endpoint=\"classify\"} 1"));
}

}  // namespace
}  // namespace deberta::service
