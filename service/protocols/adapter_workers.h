// The threads on which the gRPC adapters (TEI's and KServe's gRPC APIs) do
// their work. An adapter's request becomes one or more blocking calls on
// the in-process channel, which must not run on gRPC's callback threads
// (those threads also serve the in-process calls they would wait for), so
// the adapters' handlers hand each request to these threads, as the HTTP
// server's threads serve the HTTP adapters. The queue is bounded: a
// request that finds it full is refused at once (RESOURCE_EXHAUSTED), as
// the batcher refuses work beyond its queue.
#ifndef DEBERTA_SERVICE_PROTOCOLS_ADAPTER_WORKERS_H_
#define DEBERTA_SERVICE_PROTOCOLS_ADAPTER_WORKERS_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace deberta::service {

class AdapterWorkers {
 public:
  // `threads` >= 1 threads, at most `max_queued` jobs waiting for one.
  AdapterWorkers(int threads, size_t max_queued);
  // Runs the jobs already queued, then joins the threads.
  ~AdapterWorkers();

  AdapterWorkers(const AdapterWorkers&) = delete;
  AdapterWorkers& operator=(const AdapterWorkers&) = delete;

  // Queues `job`; false (and `job` dropped) when the queue is full.
  bool Schedule(std::function<void()> job);

 private:
  void Run();
  bool HasJobOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_queued_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_ADAPTER_WORKERS_H_
