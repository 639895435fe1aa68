// A fixed set of threads over a bounded queue of jobs.
#include "service/protocols/adapter_workers.h"

#include <utility>

namespace deberta::service {

AdapterWorkers::AdapterWorkers(int threads, size_t max_queued) : max_queued_(max_queued) {
  for (int i = 0; i < (threads < 1 ? 1 : threads); ++i) threads_.emplace_back([this] { Run(); });
}

AdapterWorkers::~AdapterWorkers() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

bool AdapterWorkers::Schedule(std::function<void()> job) {
  absl::MutexLock lock(&mu_);
  if (jobs_.size() >= max_queued_) return false;
  jobs_.push_back(std::move(job));
  return true;
}

bool AdapterWorkers::HasJobOrStopping() const { return stopping_ || !jobs_.empty(); }

void AdapterWorkers::Run() {
  while (true) {
    std::function<void()> job;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &AdapterWorkers::HasJobOrStopping));
      if (jobs_.empty()) return;  // Stopping, and nothing left to run.
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace deberta::service
