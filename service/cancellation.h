// Cancellation: the one-way "the client has gone" mark a call shares with
// its tasks, with the time it was made (gRPC's OnCancel), so that the
// batcher can tell how long it went on computing for a caller that had
// already left (deberta_abandoned_inference_seconds_total).
#ifndef DEBERTA_SERVICE_CANCELLATION_H_
#define DEBERTA_SERVICE_CANCELLATION_H_

#include <atomic>
#include <cstdint>
#include <limits>

#include "absl/time/time.h"

namespace deberta::service {

// Thread-safe: the call marks it from gRPC's thread while the batcher reads
// it from its own. Lock-free (one atomic word).
class Cancellation {
 public:
  // Marks the call cancelled at `at` (on the clock its deadline is on).
  // Once cancelled it stays so, with the first time.
  void Cancel(absl::Time at) {
    int64_t expected = kNotCancelled;
    at_nanos_.compare_exchange_strong(expected, absl::ToUnixNanos(at), std::memory_order_acq_rel);
  }
  bool cancelled() const { return at_nanos_.load(std::memory_order_acquire) != kNotCancelled; }
  // When it was cancelled; InfiniteFuture if it was not.
  absl::Time cancelled_at() const {
    const int64_t at = at_nanos_.load(std::memory_order_acquire);
    return at == kNotCancelled ? absl::InfiniteFuture() : absl::FromUnixNanos(at);
  }

 private:
  static constexpr int64_t kNotCancelled = std::numeric_limits<int64_t>::max();
  std::atomic<int64_t> at_nanos_{kNotCancelled};
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_CANCELLATION_H_
