// BatchCallers: which sequences of a running batch are still wanted, and the
// engine time charged to those whose caller had gone, on a fake clock.
#include "service/batch_callers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "service/engine_task.h"
#include "tests/testing/fake_clock.h"

namespace deberta::service {
namespace {

using ::testing::ElementsAre;

std::unique_ptr<BatchTask> Task(std::shared_ptr<Cancellation> cancelled, absl::Time deadline) {
  model::Sequence sequence;
  sequence.token_ids = {1, 2, 3};
  auto task = std::make_unique<ClassifyTask>(std::move(sequence), /*write=*/nullptr);
  task->cancelled = std::move(cancelled);
  task->deadline = deadline;
  return task;
}

TEST(BatchCallersTest, GoneSequencesAreUnwantedAndChargedTheirShareAfterTheyWent) {
  testing::FakeClock clock;
  const absl::Time start = clock.Now();
  auto cancelled = std::make_shared<Cancellation>();
  std::vector<std::unique_ptr<BatchTask>> batch;
  batch.push_back(Task(cancelled, absl::InfiniteFuture()));
  batch.push_back(Task(nullptr, start + absl::Seconds(5)));
  batch.push_back(Task(nullptr, absl::InfiniteFuture()));
  BatchCallers callers(batch, &clock, start);

  clock.AdvanceBy(absl::Seconds(1));
  EXPECT_THAT(callers.Wanted(), ElementsAre(true, true, true));
  EXPECT_FALSE(callers.any_dropped());

  clock.AdvanceBy(absl::Milliseconds(1500));  // t = 2.5: the first caller leaves.
  cancelled->Cancel(clock.Now());
  clock.AdvanceBy(absl::Milliseconds(1500));  // t = 4: three sequences computed.
  EXPECT_THAT(callers.Wanted(), ElementsAre(false, true, true));
  EXPECT_TRUE(callers.any_dropped());
  EXPECT_EQ(callers.abandoned(), absl::Milliseconds(500));  // 1.5 s after it left / 3.

  clock.AdvanceBy(absl::Seconds(2));  // t = 6: the second's deadline was t = 5.
  callers.Finish(clock.Now());
  EXPECT_EQ(callers.abandoned(), absl::Seconds(1));  // + 1 s after it / 2.
  EXPECT_TRUE(callers.gone(0));
  EXPECT_TRUE(callers.gone(1));
  EXPECT_FALSE(callers.gone(2));
}

TEST(BatchCallersTest, ACallerGoneBeforeTheIntervalIsChargedTheWholeOfIt) {
  testing::FakeClock clock;
  const absl::Time start = clock.Now();
  auto cancelled = std::make_shared<Cancellation>();
  std::vector<std::unique_ptr<BatchTask>> batch;
  batch.push_back(Task(cancelled, absl::InfiniteFuture()));
  batch.push_back(Task(nullptr, absl::InfiniteFuture()));
  // Cancelled before the batch started (after the queue was swept): every
  // moment of its computation was for a caller already gone.
  cancelled->Cancel(start - absl::Seconds(1));
  BatchCallers callers(batch, &clock, start);
  clock.AdvanceBy(absl::Seconds(2));
  EXPECT_THAT(callers.Wanted(), ElementsAre(false, true));
  EXPECT_EQ(callers.abandoned(), absl::Seconds(1));  // 2 s / 2.
  // A later cancellation keeps the first time.
  cancelled->Cancel(clock.Now());
  EXPECT_EQ(cancelled->cancelled_at(), start - absl::Seconds(1));
}

TEST(BatchCallersTest, NothingIsChargedWhileEveryCallerWaits) {
  testing::FakeClock clock;
  std::vector<std::unique_ptr<BatchTask>> batch;
  batch.push_back(Task(nullptr, absl::InfiniteFuture()));
  BatchCallers callers(batch, &clock, clock.Now());
  clock.AdvanceBy(absl::Seconds(1));
  EXPECT_THAT(callers.Wanted(), ElementsAre(true));
  callers.Finish(clock.Now() + absl::Seconds(1));
  EXPECT_EQ(callers.abandoned(), absl::ZeroDuration());
  EXPECT_FALSE(callers.gone(0));
  EXPECT_FALSE(callers.any_dropped());
}

}  // namespace
}  // namespace deberta::service
