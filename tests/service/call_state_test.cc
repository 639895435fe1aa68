// IncrementalBarrier and ThreadSafeStatus: the two pieces a call uses to
// answer once, after its last task, with the first error.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "service/incremental_barrier.h"
#include "service/thread_safe_status.h"

namespace deberta::service {
namespace {

TEST(IncrementalBarrierTest, RunsOnceAfterTheOwnerAndEveryPiece) {
  int done = 0;
  std::function<void()> first, second;
  {
    IncrementalBarrier barrier([&] { ++done; });
    first = barrier.Inc();
    second = barrier.Inc();
    first();
    EXPECT_EQ(done, 0);
  }
  EXPECT_EQ(done, 0);  // The owner is gone, one piece is pending.
  second();
  EXPECT_EQ(done, 1);
}

TEST(IncrementalBarrierTest, RunsWhenTheOwnerLeavesIfThePiecesFinishedFirst) {
  int done = 0;
  {
    IncrementalBarrier barrier([&] { ++done; });
    barrier.Inc()();
    barrier.Inc()();
    EXPECT_EQ(done, 0);  // Still held by its owner.
  }
  EXPECT_EQ(done, 1);
}

TEST(IncrementalBarrierTest, WithNoPiecesRunsWhenTheOwnerLeaves) {
  int done = 0;
  { IncrementalBarrier barrier([&] { ++done; }); }
  EXPECT_EQ(done, 1);
}

TEST(IncrementalBarrierTest, NeverRunsWhenAPieceIsDroppedUncalled) {
  int done = 0;
  {
    IncrementalBarrier barrier([&] { ++done; });
    barrier.Inc()();
    std::function<void()> dropped = barrier.Inc();
  }
  EXPECT_EQ(done, 0);
}

TEST(IncrementalBarrierTest, PiecesFinishingOnManyThreadsRunItExactlyOnce) {
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> done{0};
    std::vector<std::thread> threads;
    {
      IncrementalBarrier barrier([&] { done.fetch_add(1); });
      for (int i = 0; i < 8; ++i) threads.emplace_back(barrier.Inc());
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(done.load(), 1);
  }
}

TEST(ThreadSafeStatusTest, KeepsTheFirstError) {
  ThreadSafeStatus status;
  EXPECT_TRUE(status.status().ok());
  status.Update(absl::OkStatus());
  EXPECT_TRUE(status.status().ok());
  status.Update(absl::DeadlineExceededError("first"));
  status.Update(absl::InternalError("second"));
  status.Update(absl::OkStatus());
  EXPECT_EQ(status.status(), absl::DeadlineExceededError("first"));
}

}  // namespace
}  // namespace deberta::service
