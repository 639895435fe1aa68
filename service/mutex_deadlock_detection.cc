// See mutex_deadlock_detection.h.
#include "service/mutex_deadlock_detection.h"

#include "absl/synchronization/mutex.h"

namespace deberta::service {

void ConfigureMutexDeadlockDetection() {
#ifdef NDEBUG
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

}  // namespace deberta::service
