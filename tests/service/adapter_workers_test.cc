// AdapterWorkers (service/protocols/adapter_workers.h): every queued job
// runs, a job beyond the bounded queue is refused at once, and the
// destructor runs what is queued before it joins.
#include "service/protocols/adapter_workers.h"

#include <gtest/gtest.h>

#include <atomic>

#include "absl/synchronization/notification.h"

namespace deberta::service {
namespace {

TEST(AdapterWorkersTest, RefusesAJobBeyondTheQueueAndRunsTheQueuedOnesBeforeJoining) {
  std::atomic<int> ran{0};
  absl::Notification started, release;
  {
    AdapterWorkers workers(/*threads=*/1, /*max_queued=*/2);
    ASSERT_TRUE(workers.Schedule([&] {
      started.Notify();
      release.WaitForNotification();
      ++ran;
    }));
    started.WaitForNotification();  // The one thread is busy; the queue is empty.
    EXPECT_TRUE(workers.Schedule([&] { ++ran; }));
    EXPECT_TRUE(workers.Schedule([&] { ++ran; }));
    EXPECT_FALSE(workers.Schedule([&] { ran += 100; }));  // Full: refused, never run.
    release.Notify();
  }
  EXPECT_EQ(ran.load(), 3);
}

TEST(AdapterWorkersTest, RunsJobsOnSeveralThreadsAtOnce) {
  absl::Notification first_running, second_running;
  AdapterWorkers workers(/*threads=*/2, /*max_queued=*/4);
  // Each job waits for the other: they finish only if both run at once.
  ASSERT_TRUE(workers.Schedule([&] {
    first_running.Notify();
    second_running.WaitForNotification();
  }));
  ASSERT_TRUE(workers.Schedule([&] {
    second_running.Notify();
    first_running.WaitForNotification();
  }));
}

}  // namespace
}  // namespace deberta::service
