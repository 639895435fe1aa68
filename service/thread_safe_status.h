// ThreadSafeStatus: the first error reported by any of several threads, as
// TF Serving's batching/threadsafe_status.h keeps it. The tasks of one
// request report here; the request is answered with the result.
#ifndef DEBERTA_SERVICE_THREAD_SAFE_STATUS_H_
#define DEBERTA_SERVICE_THREAD_SAFE_STATUS_H_

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace deberta::service {

// Thread-safe.
class ThreadSafeStatus {
 public:
  // Keeps `status` if it is the first non-OK one; later errors and OKs are
  // ignored.
  void Update(const absl::Status& status);
  // OK, or the first error reported.
  absl::Status status() const;

 private:
  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_THREAD_SAFE_STATUS_H_
