// Abseil's deadlock detector as this binary's main sets it up, the same way
// as deberta-server's and deberta-cli's (service/mutex_deadlock_detection.h):
// a mutex made where a destroyed one lived starts with no lock order.
#include "service/mutex_deadlock_detection.h"

#include <gtest/gtest.h>

#include <new>

#include "absl/synchronization/mutex.h"

namespace deberta::service {
namespace {

void LockOneInsideTheOther(absl::Mutex& outer, absl::Mutex& inner) {
  absl::MutexLock outer_lock(&outer);
  absl::MutexLock inner_lock(&inner);
}

// What a server does all the time (a call's mutexes are freed with the call
// and the allocator hands their addresses to the next call's). Built with
// NDEBUG against Debian 13's abseil and the detector left on, the second
// order aborts the process with "Potential Mutex deadlock" (CI's LibTorch
// 2.6 stage runs this binary on Debian 13; Debian 12's abseil forgets a
// destroyed mutex either way).
TEST(MutexDeadlockDetectionTest, MutexesAtFreedMutexesAddressesInheritNoLockOrder) {
  alignas(absl::Mutex) unsigned char first[sizeof(absl::Mutex)];
  alignas(absl::Mutex) unsigned char second[sizeof(absl::Mutex)];
  for (bool first_outside : {true, false}) {
    auto* a = new (first) absl::Mutex;
    auto* b = new (second) absl::Mutex;
    if (first_outside) {
      LockOneInsideTheOther(*a, *b);
    } else {
      LockOneInsideTheOther(*b, *a);
    }
    a->~Mutex();
    b->~Mutex();
  }
  // Reaching here is the test; the detector would have aborted above.
  SUCCEED();
}

}  // namespace
}  // namespace deberta::service
