// FakeClock: a Clock whose time moves only when a test advances it, for
// batcher tests that must not sleep.
//
// A thread waiting in AwaitUntil wakes when its condition holds (the usual
// absl::Mutex rule: re-checked whenever `mu` is released) or when
// AdvanceBy moves fake time to its deadline. Tests learn that the batcher
// is idle and waiting with AwaitWaiter, which makes "nothing happened
// before the timeout" a deterministic check instead of a sleep.
#ifndef DEBERTA_TESTS_TESTING_FAKE_CLOCK_H_
#define DEBERTA_TESTS_TESTING_FAKE_CLOCK_H_

#include <map>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "service/clock.h"

namespace deberta::testing {

// Thread-safe.
class FakeClock final : public service::Clock {
 public:
  explicit FakeClock(absl::Time start = absl::UnixEpoch()) : now_(start) {}

  absl::Time Now() override {
    absl::MutexLock lock(&clock_mu_);
    return now_;
  }

  bool AwaitUntil(absl::Mutex& mu, const absl::Condition& condition, absl::Time deadline) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    {
      absl::MutexLock lock(&clock_mu_);
      ++waiters_[{&mu, deadline}];
    }
    struct Wait {
      FakeClock* clock;
      const absl::Condition* condition;
      absl::Time deadline;
      bool Ready() const {
        return condition->Eval() || clock->Now() >= deadline;
      }
    } wait{this, &condition, deadline};
    mu.Await(absl::Condition(&wait, &Wait::Ready));
    {
      absl::MutexLock lock(&clock_mu_);
      auto it = waiters_.find({&mu, deadline});
      if (--it->second == 0) waiters_.erase(it);
    }
    return condition.Eval();
  }

  // Moves time forward and wakes the waiters whose deadline it reached.
  void AdvanceBy(absl::Duration step) {
    std::map<std::pair<absl::Mutex*, absl::Time>, int> waiters;
    {
      absl::MutexLock lock(&clock_mu_);
      now_ += step;
      waiters = waiters_;
    }
    // Releasing a mutex makes absl re-evaluate the conditions waited on it.
    for (const auto& [key, count] : waiters) {
      key.first->Lock();
      key.first->Unlock();
    }
  }

  // Blocks until some thread waits in AwaitUntil with exactly `deadline`.
  void AwaitWaiter(absl::Time deadline) {
    absl::MutexLock lock(&clock_mu_);
    struct Find {
      const std::map<std::pair<absl::Mutex*, absl::Time>, int>* waiters;
      absl::Time deadline;
      bool Found() const {
        for (const auto& [key, count] : *waiters) {
          if (key.second == deadline) return true;
        }
        return false;
      }
    } find{&waiters_, deadline};
    clock_mu_.Await(absl::Condition(&find, &Find::Found));
  }

 private:
  absl::Mutex clock_mu_;
  absl::Time now_ ABSL_GUARDED_BY(clock_mu_);
  // Threads in AwaitUntil, by the mutex they wait on and their deadline.
  std::map<std::pair<absl::Mutex*, absl::Time>, int> waiters_ ABSL_GUARDED_BY(clock_mu_);
};

}  // namespace deberta::testing

#endif  // DEBERTA_TESTS_TESTING_FAKE_CLOCK_H_
