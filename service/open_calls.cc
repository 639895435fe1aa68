// OpenCalls: a count under a mutex, awaited with a condition.
#include "service/open_calls.h"

namespace deberta::service {

bool OpenCalls::TryAccept() {
  absl::MutexLock lock(&mu_);
  if (!accepting_) return false;
  ++open_;
  return true;
}

void OpenCalls::Done() {
  absl::MutexLock lock(&mu_);
  --open_;
}

void OpenCalls::StopAccepting() {
  absl::MutexLock lock(&mu_);
  accepting_ = false;
}

bool OpenCalls::AwaitNone(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithDeadline(absl::Condition(+[](int* open) { return *open == 0; }, &open_), deadline);
}

}  // namespace deberta::service
