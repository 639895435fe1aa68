// A check of the ThreadSanitizer set-up itself (scripts/tsan.sh): two
// threads increment one counter, under an absl::Mutex when run with
// "locked", without it otherwise. With the instrumented abseil the locked
// run must be clean (the mutex is visible) and the unlocked one must be
// reported (the sanitizer is on): without both, a clean test run proves
// nothing.
#include <cstring>
#include <thread>

#include "absl/synchronization/mutex.h"

int main(int argc, char** argv) {
  const bool locked = argc > 1 && std::strcmp(argv[1], "locked") == 0;
  absl::Mutex mu;
  long counter = 0;
  auto work = [&] {
    for (int i = 0; i < 1000; ++i) {
      if (locked) mu.Lock();
      ++counter;
      if (locked) mu.Unlock();
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  return counter > 0 ? 0 : 1;
}
