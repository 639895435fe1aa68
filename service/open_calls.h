// OpenCalls: the calls something has accepted and not yet finished, and
// whether it accepts more: what a draining server and a version being
// retired both wait on (InferenceServiceImpl, ServedModel).
#ifndef DEBERTA_SERVICE_OPEN_CALLS_H_
#define DEBERTA_SERVICE_OPEN_CALLS_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace deberta::service {

// Thread-safe.
class OpenCalls {
 public:
  // Counts a call unless StopAccepting was called.
  bool TryAccept();
  // An accepted call is done.
  void Done();
  // From now on TryAccept is false.
  void StopAccepting();
  // Blocks until no accepted call is open, or `deadline`; whether none is.
  bool AwaitNone(absl::Time deadline);

 private:
  absl::Mutex mu_;
  bool accepting_ ABSL_GUARDED_BY(mu_) = true;
  int open_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_OPEN_CALLS_H_
