// ThreadSafeStatus: first error wins.
#include "service/thread_safe_status.h"

namespace deberta::service {

void ThreadSafeStatus::Update(const absl::Status& status) {
  if (status.ok()) return;
  absl::MutexLock lock(&mu_);
  if (status_.ok()) status_ = status;
}

absl::Status ThreadSafeStatus::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

}  // namespace deberta::service
