// Batcher: queues, batch formation, execution and failure delivery.
#include "service/batcher.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "service/batch_callers.h"
#include "service/metrics.h"

namespace deberta::service {

RealClock* RealClock::Get() {
  static RealClock* clock = new RealClock();
  return clock;
}

Batcher::Batcher(const Options& options, std::vector<model::Engine*> engines, Clock* clock,
                 ServiceMetrics* metrics)
    : options_(options), clock_(clock), metrics_(metrics) {
  replicas_.resize(engines.size());
  for (size_t r = 0; r < engines.size(); ++r) {
    replicas_[r].index = static_cast<int>(r);
    replicas_[r].engine = engines[r];
  }
  if (metrics_) metrics_->SetReplicas(static_cast<int>(replicas_.size()));
}

Batcher::~Batcher() { Stop(); }

absl::Status Batcher::Start() {
  absl::MutexLock stop_lock(&stop_mu_);
  if (replicas_.empty()) return absl::InvalidArgumentError("the batcher has no engine");
  std::vector<absl::Status> statuses(replicas_.size());
  absl::BlockingCounter initialized(static_cast<int>(replicas_.size()));
  for (Replica& replica : replicas_) {
    executors_.emplace_back([this, &replica, &statuses, &initialized] {
      // Per-thread engine state (intra-op threads, device, warm-up)
      // belongs to the thread that runs every batch of this engine.
      absl::Status status = replica.engine->InitializeThread();
      const bool ok = status.ok();
      statuses[replica.index] = std::move(status);
      initialized.DecrementCount();  // Start's locals are not touched after this.
      // Waits for Start's verdict like any idle executor: work, or the
      // stop that a failed start sets.
      if (ok) Run(replica);
    });
  }
  initialized.Wait();
  absl::Status first_error;
  for (size_t r = 0; r < statuses.size() && first_error.ok(); ++r) {
    if (statuses[r].ok()) continue;
    first_error = replicas_.size() == 1
                      ? statuses[r]
                      : absl::Status(statuses[r].code(), absl::StrCat("replica ", r, " of ", replicas_.size(),
                                                                      ": ", statuses[r].message()));
  }
  {
    absl::MutexLock lock(&mu_);
    accepting_ = first_error.ok() && !stopping_;
    start_failed_ = !first_error.ok();
  }
  if (!first_error.ok()) {
    for (std::thread& executor : executors_) executor.join();
    executors_.clear();
    LOG(ERROR) << "engine initialization on the executor thread failed: " << first_error;
  }
  return first_error;
}

void Batcher::StartDraining() {
  absl::MutexLock lock(&mu_);
  draining_ = true;
}

void Batcher::Stop() {
  absl::MutexLock stop_lock(&stop_mu_);
  {
    absl::MutexLock lock(&mu_);
    accepting_ = false;
    draining_ = true;
    stopping_ = true;
  }
  for (std::thread& executor : executors_) {
    if (executor.joinable()) executor.join();
  }
}

absl::Status Batcher::Schedule(std::vector<std::unique_ptr<BatchTask>> tasks) {
  if (tasks.empty()) return absl::InvalidArgumentError("no sequences to schedule");
  if (tasks.front() == nullptr) return absl::InvalidArgumentError("a task is null");
  const Endpoint endpoint = tasks.front()->queue();
  if (!IsBatched(endpoint)) {
    return absl::InvalidArgumentError(absl::StrCat(EndpointName(endpoint), " is not a batched endpoint"));
  }
  for (const auto& task : tasks) {
    if (task == nullptr || task->queue() != endpoint || task->run() != tasks.front()->run() || !task->done) {
      return absl::InvalidArgumentError("the tasks of one request must share one queue and kind and have `done`");
    }
  }
  const int q = static_cast<int>(endpoint);
  absl::MutexLock lock(&mu_);
  if (!accepting_) {
    return absl::UnavailableError(stopping_ ? "server is shutting down" : "the model is not ready yet");
  }
  Queue& queue = queues_[q];
  if (tasks.size() > options_.max_enqueued_tasks) {
    // Not worth a retry: say so (a request's windows and documents count).
    if (metrics_) metrics_->RecordRejection(RejectionReason::kQueueFull);
    return absl::ResourceExhaustedError(absl::StrCat("the request is ", tasks.size(),
                                                     " sequences (windows and documents included); the ",
                                                     EndpointName(endpoint), " queue holds at most ",
                                                     options_.max_enqueued_tasks, " (--max_queue_size)"));
  }
  if (queue.size() + tasks.size() > options_.max_enqueued_tasks) {
    if (metrics_) metrics_->RecordRejection(RejectionReason::kQueueFull);
    return absl::ResourceExhaustedError(
        absl::StrCat(EndpointName(endpoint), " queue is full (", queue.size(), " of ",
                     options_.max_enqueued_tasks, " sequences queued); retry later"));
  }
  const absl::Time now = clock_->Now();
  for (auto& task : tasks) {
    task->enqueue_time = now;
    queued_tokens_[q] += static_cast<int64_t>(task->length());
    queue.push_back(std::move(task));
  }
  UpdateQueueGauges(q);
  return absl::OkStatus();
}

size_t Batcher::QueuedTasks(Endpoint endpoint) const {
  absl::MutexLock lock(&mu_);
  return IsBatched(endpoint) ? queues_[static_cast<int>(endpoint)].size() : 0;
}

void Batcher::UpdateQueueGauges(int queue_index) {
  if (metrics_) {
    metrics_->SetQueueDepth(static_cast<Endpoint>(queue_index), queues_[queue_index].size(),
                            queued_tokens_[queue_index]);
  }
}

bool Batcher::IsReady(const Queue& queue, absl::Time now) const {
  return !queue.empty() && (draining_ || queue.size() >= options_.max_batch_size ||
                            queue.front()->enqueue_time + options_.batch_timeout <= now);
}

bool Batcher::HasReadyWork(absl::Time now) const {
  for (const Queue& queue : queues_) {
    if (IsReady(queue, now)) return true;
  }
  return false;
}

absl::Time Batcher::NextWakeTime() const {
  absl::Time earliest = absl::InfiniteFuture();
  for (const Queue& queue : queues_) {
    if (queue.empty()) continue;
    earliest = std::min(earliest, queue.front()->enqueue_time + options_.batch_timeout);
    for (const auto& task : queue) earliest = std::min(earliest, task->deadline);
  }
  return earliest;
}

void Batcher::DropAbandoned(absl::Time now, Tasks* dropped) {
  for (int q = 0; q < kNumBatchedEndpoints; ++q) {
    Queue& queue = queues_[q];
    const size_t before = dropped->size();
    for (auto it = queue.begin(); it != queue.end();) {
      if ((*it)->is_gone(now)) {
        queued_tokens_[q] -= static_cast<int64_t>((*it)->length());
        dropped->push_back(std::move(*it));
        it = queue.erase(it);
      } else {
        ++it;
      }
    }
    if (dropped->size() != before) UpdateQueueGauges(q);
  }
}

Batcher::Tasks Batcher::TakeBatch(Endpoint endpoint) {
  const int q = static_cast<int>(endpoint);
  Queue& queue = queues_[q];
  std::vector<int64_t> lengths;
  lengths.reserve(queue.size());
  for (const auto& task : queue) lengths.push_back(static_cast<int64_t>(task->length()));
  const BatchLimits limits{options_.max_batch_size, options_.max_batch_tokens};
  std::vector<size_t> chosen = options_.length_aware ? FormLengthAwareBatch(lengths, limits)
                                                     : FormFirstComeBatch(lengths, limits);
  Tasks batch;
  batch.reserve(chosen.size());
  for (size_t i : chosen) {
    queued_tokens_[q] -= static_cast<int64_t>(queue[i]->length());
    batch.push_back(std::move(queue[i]));
  }
  queue.erase(std::remove(queue.begin(), queue.end(), nullptr), queue.end());
  UpdateQueueGauges(q);
  return batch;
}

void Batcher::Run(Replica& replica) {
  while (true) {
    Tasks batch, dropped;
    Endpoint endpoint = Endpoint::kClassify;
    absl::Time now;
    {
      absl::MutexLock lock(&mu_);
      while (true) {
        now = clock_->Now();
        DropAbandoned(now, &dropped);
        if (!dropped.empty() || HasReadyWork(now)) break;
        if (stopping_ || start_failed_) return;  // Nothing left anywhere.
        // Wake for: stop, a full batch, or a task that moves the next wake
        // earlier (one arriving at an empty queue, or with an earlier
        // deadline); else at the next flush or deadline.
        struct Wait {
          Batcher* batcher;
          absl::Time wake;
        } wait{this, NextWakeTime()};
        clock_->AwaitUntil(mu_,
                           absl::Condition(
                               +[](Wait* w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                 return w->batcher->stopping_ || w->batcher->start_failed_ ||
                                        w->batcher->HasReadyWork(absl::InfinitePast()) ||
                                        w->batcher->NextWakeTime() < w->wake;
                               },
                               &wait),
                           wait.wake);
      }
      // Round-robin over the endpoints that are ready.
      for (int i = 0; i < kNumBatchedEndpoints; ++i) {
        const int q = (next_queue_ + i) % kNumBatchedEndpoints;
        if (IsReady(queues_[q], now)) {
          endpoint = static_cast<Endpoint>(q);
          next_queue_ = (q + 1) % kNumBatchedEndpoints;
          batch = TakeBatch(endpoint);
          break;
        }
      }
    }
    // Never run the model, or callbacks, under the lock.
    AnswerDropped(std::move(dropped), now);
    if (!batch.empty()) DropUnfinishable(replica, endpoint, &batch, now);
    if (!batch.empty()) Execute(replica, endpoint, std::move(batch), now);
  }
}

void Batcher::AnswerGone(BatchTask& task, absl::Time now, absl::Duration inference, absl::string_view when) {
  const bool expired = task.deadline <= now;
  if (metrics_) metrics_->RecordRejection(expired ? RejectionReason::kDeadlineExceeded : RejectionReason::kCancelled);
  task.Answer(expired ? absl::DeadlineExceededError(absl::StrCat("deadline passed ", when))
                      : absl::CancelledError(absl::StrCat("client cancelled the request ", when)),
              TaskTiming{now - inference - task.enqueue_time, inference});
}

void Batcher::AnswerDropped(Tasks dropped, absl::Time now) {
  for (auto& task : dropped) AnswerGone(*task, now, absl::ZeroDuration(), "while queued");
}

namespace {

// Padded tokens of a batch: its size times its longest sequence.
int64_t PaddedTokens(const std::vector<std::unique_ptr<BatchTask>>& batch) {
  int64_t longest = 0;
  for (const auto& task : batch) longest = std::max<int64_t>(longest, static_cast<int64_t>(task->length()));
  return longest * static_cast<int64_t>(batch.size());
}

// Runs a batch with its first task's kind; a batch that mixes kinds (two
// task types naming one queue) fails rather than run a task as another.
absl::Status RunKindOf(const std::vector<BatchTask*>& batch, model::Engine& engine,
                       const model::Engine::RowsWanted& rows_wanted) {
  const BatchTask::RunBatch run = batch.front()->run();
  for (const BatchTask* task : batch) {
    if (task->run() != run) return absl::InternalError("a batch mixes two kinds of task in one queue");
  }
  return run(engine, batch, rows_wanted);
}

}  // namespace

void Batcher::DropUnfinishable(const Replica& replica, Endpoint endpoint, Tasks* batch, absl::Time now) {
  const double per_token = replica.seconds_per_token[static_cast<int>(endpoint)];
  if (per_token <= 0) return;
  const absl::Time finish = now + absl::Seconds(per_token * static_cast<double>(PaddedTokens(*batch)));
  Tasks kept;
  kept.reserve(batch->size());
  for (auto& task : *batch) {
    if (task->deadline >= finish) {
      kept.push_back(std::move(task));
      continue;
    }
    if (metrics_) metrics_->RecordRejection(RejectionReason::kDeadlineExceeded);
    task->Answer(absl::DeadlineExceededError(absl::StrCat("deadline would pass before the batch finishes (estimated ",
                                                          absl::FormatDuration(finish - now), ")")),
                 TaskTiming{now - task->enqueue_time, absl::ZeroDuration()});
  }
  *batch = std::move(kept);
}

void Batcher::Execute(Replica& replica, Endpoint endpoint, Tasks batch, absl::Time now) {
  int64_t real_tokens = 0, longest = 0;
  for (const auto& task : batch) {
    real_tokens += static_cast<int64_t>(task->length());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(task->length()));
    if (metrics_) metrics_->RecordQueueLatency(endpoint, now - task->enqueue_time);
  }
  const int64_t padded = longest * static_cast<int64_t>(batch.size());
  const absl::Time start = clock_->Now();
  // Between layers the engine drops the sequences whose caller has gone.
  BatchCallers callers(batch, clock_, start);
  const model::Engine::RowsWanted rows_wanted = [&callers] { return callers.Wanted(); };
  // Queues hold one kind of task each (Schedule checks each request); the
  // batch's kind is its first task's.
  std::vector<BatchTask*> tasks;
  tasks.reserve(batch.size());
  for (const auto& task : batch) tasks.push_back(task.get());
  absl::Status status = RunKindOf(tasks, *replica.engine, rows_wanted);
  const absl::Time end = clock_->Now();
  const absl::Duration inference = end - start;
  callers.Finish(end);
  if (status.ok() && padded > 0 && !callers.any_dropped()) {
    // Recent batches weigh most: the machine's load and the batch shapes
    // change. Batches that dropped sequences on the way would understate it.
    double& per_token = replica.seconds_per_token[static_cast<int>(endpoint)];
    const double sample = absl::ToDoubleSeconds(inference) / static_cast<double>(padded);
    per_token = per_token <= 0 ? sample : 0.8 * per_token + 0.2 * sample;
  }
  if (metrics_) {
    metrics_->RecordBatch(endpoint, batch.size(), real_tokens, padded, inference);
    metrics_->RecordReplicaBatch(replica.index, inference);
    if (callers.abandoned() > absl::ZeroDuration()) {
      metrics_->RecordAbandonedInference(endpoint, callers.abandoned());
    }
    if (const auto memory = replica.engine->DeviceMemory()) {
      metrics_->SetDeviceMemory(replica.index, memory->allocated_bytes, memory->reserved_bytes);
    }
  }
  if (absl::IsCancelled(status)) {
    // Stopped for want of callers: each is answered as what it was.
    for (auto& task : batch) AnswerGone(*task, end, inference, "during inference; the batch was stopped");
    return;
  }
  if (!status.ok()) {
    LOG(ERROR) << EndpointName(endpoint) << " batch of " << batch.size() << " sequences on replica "
               << replica.index << " ("
               << padded << " padded tokens) failed after " << inference << ": " << status;
  }
  // An engine failure fails every task of the batch; the batcher goes on.
  // Callers found gone are answered as what they are, whether the engine
  // dropped their sequence or finished it.
  for (size_t i = 0; i < batch.size(); ++i) {
    if (status.ok() && callers.gone(i)) {
      AnswerGone(*batch[i], end, inference, "during inference");
      continue;
    }
    batch[i]->Answer(status, TaskTiming{now - batch[i]->enqueue_time, inference});
  }
}

}  // namespace deberta::service
