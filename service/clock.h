// Clock: the batcher reads time only through this interface, so tests can
// drive it with a fake clock.
#ifndef DEBERTA_SERVICE_CLOCK_H_
#define DEBERTA_SERVICE_CLOCK_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace deberta::service {

// Thread-safe implementations only.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
  // Waits on `mu` (held) until `condition` holds or the clock reaches
  // `deadline`. Returns whether the condition holds.
  virtual bool AwaitUntil(absl::Mutex& mu, const absl::Condition& condition,
                          absl::Time deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;
};

class RealClock final : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  bool AwaitUntil(absl::Mutex& mu, const absl::Condition& condition, absl::Time deadline) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return mu.AwaitWithDeadline(condition, deadline);
  }
  // Process-wide instance.
  static RealClock* Get();
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_CLOCK_H_
