// Batcher: queues, batch formation, execution and failure delivery.
#include "service/batcher.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "service/metrics.h"

namespace deberta::service {

const char* TaskKindName(TaskKind kind) {
  return kind == TaskKind::kClassify ? "classify" : "fill_mask";
}

RealClock* RealClock::Get() {
  static RealClock* clock = new RealClock();
  return clock;
}

Batcher::Batcher(const Options& options, model::Engine* engine, Clock* clock,
                 ServiceMetrics* metrics)
    : options_(options), engine_(engine), clock_(clock), metrics_(metrics) {
  executor_ = std::thread([this] { Run(); });
}

Batcher::~Batcher() { Stop(); }

void Batcher::RunOnExecutor(std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  executor_work_.push_back(std::move(fn));
}

void Batcher::StartDraining() {
  absl::MutexLock lock(&mu_);
  draining_ = true;
}

void Batcher::Stop() {
  {
    absl::MutexLock lock(&mu_);
    draining_ = true;
    stopping_ = true;
  }
  if (executor_.joinable()) executor_.join();
}

absl::Status Batcher::Schedule(std::vector<std::unique_ptr<BatchTask>> tasks) {
  if (tasks.empty()) return absl::InvalidArgumentError("no sequences to schedule");
  const TaskKind kind = tasks.front()->kind;
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("server is shutting down");
  Queue& queue = queues_[static_cast<int>(kind)];
  if (queue.size() + tasks.size() > options_.max_enqueued_tasks) {
    if (metrics_) metrics_->RecordRejection("queue_full");
    return absl::ResourceExhaustedError(
        absl::StrCat(TaskKindName(kind), " queue is full (", queue.size(), " of ",
                     options_.max_enqueued_tasks, " sequences queued); retry later"));
  }
  const absl::Time now = clock_->Now();
  for (auto& task : tasks) {
    task->enqueue_time = now;
    queued_tokens_[static_cast<int>(kind)] += static_cast<int64_t>(task->length());
    queue.push_back(std::move(task));
  }
  UpdateQueueGauges(kind);
  return absl::OkStatus();
}

size_t Batcher::QueuedTasks(TaskKind kind) const {
  absl::MutexLock lock(&mu_);
  return queues_[static_cast<int>(kind)].size();
}

void Batcher::UpdateQueueGauges(TaskKind kind) {
  if (metrics_) {
    metrics_->SetQueueDepth(kind, queues_[static_cast<int>(kind)].size(),
                            queued_tokens_[static_cast<int>(kind)]);
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

absl::Time Batcher::EarliestFlushTime() const {
  absl::Time earliest = absl::InfiniteFuture();
  for (const Queue& queue : queues_) {
    if (!queue.empty()) {
      earliest = std::min(earliest, queue.front()->enqueue_time + options_.batch_timeout);
    }
  }
  return earliest;
}

std::vector<std::unique_ptr<BatchTask>> Batcher::TakeBatch(
    TaskKind kind, absl::Time now, std::vector<std::unique_ptr<BatchTask>>* dropped) {
  const int k = static_cast<int>(kind);
  Queue& queue = queues_[k];
  // Expired and cancelled tasks never reach the engine.
  for (auto it = queue.begin(); it != queue.end();) {
    BatchTask& task = **it;
    if (task.deadline <= now || (task.is_cancelled && task.is_cancelled())) {
      queued_tokens_[k] -= static_cast<int64_t>(task.length());
      dropped->push_back(std::move(*it));
      it = queue.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<int64_t> lengths;
  lengths.reserve(queue.size());
  for (const auto& task : queue) lengths.push_back(static_cast<int64_t>(task->length()));
  const BatchLimits limits{options_.max_batch_size, options_.max_batch_tokens};
  std::vector<size_t> chosen = options_.length_aware ? FormLengthAwareBatch(lengths, limits)
                                                     : FormFirstComeBatch(lengths, limits);
  std::vector<std::unique_ptr<BatchTask>> batch;
  batch.reserve(chosen.size());
  for (size_t i : chosen) {
    queued_tokens_[k] -= static_cast<int64_t>(queue[i]->length());
    batch.push_back(std::move(queue[i]));
  }
  queue.erase(std::remove(queue.begin(), queue.end(), nullptr), queue.end());
  UpdateQueueGauges(kind);
  return batch;
}

void Batcher::Run() {
  while (true) {
    std::vector<std::unique_ptr<BatchTask>> batch, dropped;
    std::vector<std::function<void()>> work;
    TaskKind kind = TaskKind::kClassify;
    absl::Time now;
    {
      absl::MutexLock lock(&mu_);
      while (true) {
        now = clock_->Now();
        if (!executor_work_.empty() || HasReadyWork(now)) break;
        if (stopping_) return;  // Nothing left anywhere.
        // Wake for: stop, executor work, a full batch, or a task that moves
        // the next flush earlier (one arriving at an empty queue); else at
        // the flush time.
        struct Wait {
          Batcher* batcher;
          absl::Time flush;
        } wait{this, EarliestFlushTime()};
        clock_->AwaitUntil(mu_,
                           absl::Condition(
                               +[](Wait* w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                 return w->batcher->stopping_ || !w->batcher->executor_work_.empty() ||
                                        w->batcher->HasReadyWork(absl::InfinitePast()) ||
                                        w->batcher->EarliestFlushTime() < w->flush;
                               },
                               &wait),
                           wait.flush);
      }
      work.swap(executor_work_);
      if (work.empty()) {
        // Round-robin over the endpoints that are ready.
        for (int i = 0; i < kNumTaskKinds; ++i) {
          const int k = (next_kind_ + i) % kNumTaskKinds;
          if (IsReady(queues_[k], now)) {
            kind = static_cast<TaskKind>(k);
            next_kind_ = (k + 1) % kNumTaskKinds;
            break;
          }
        }
        batch = TakeBatch(kind, now, &dropped);
      }
    }
    // Never run the model, or callbacks, under the lock.
    for (auto& fn : work) fn();
    for (auto& task : dropped) {
      const bool expired = task->deadline <= now;
      if (metrics_) metrics_->RecordRejection(expired ? "deadline_exceeded" : "cancelled");
      task->done(expired ? absl::DeadlineExceededError("deadline passed while queued")
                         : absl::CancelledError("client cancelled the request"),
                 TaskResult{});
    }
    if (!batch.empty()) Execute(kind, std::move(batch), now);
  }
}

void Batcher::Execute(TaskKind kind, std::vector<std::unique_ptr<BatchTask>> batch,
                      absl::Time now) {
  int64_t real_tokens = 0, longest = 0;
  for (const auto& task : batch) {
    real_tokens += static_cast<int64_t>(task->length());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(task->length()));
    if (metrics_) metrics_->RecordQueueLatency(kind, now - task->enqueue_time);
  }
  const int64_t padded = longest * static_cast<int64_t>(batch.size());
  const absl::Time start = clock_->Now();
  absl::Status status;
  std::vector<TaskResult> results(batch.size());
  if (kind == TaskKind::kClassify) {
    std::vector<model::Sequence> inputs;
    inputs.reserve(batch.size());
    for (const auto& task : batch) inputs.push_back(task->input.sequence);
    auto outputs = engine_->Classify(inputs);
    status = outputs.status();
    if (outputs.ok()) {
      for (size_t i = 0; i < batch.size(); ++i) results[i].classify = std::move((*outputs)[i]);
    }
  } else {
    std::vector<model::MaskedSequence> inputs;
    inputs.reserve(batch.size());
    for (const auto& task : batch) inputs.push_back(task->input);
    auto outputs = engine_->FillMask(inputs);
    status = outputs.status();
    if (outputs.ok()) {
      for (size_t i = 0; i < batch.size(); ++i) results[i].fill_mask = std::move((*outputs)[i]);
    }
  }
  if (metrics_) {
    metrics_->RecordBatch(kind, batch.size(), real_tokens, padded, clock_->Now() - start);
  }
  // An engine failure fails every task of the batch; the batcher goes on.
  for (size_t i = 0; i < batch.size(); ++i) batch[i]->done(status, std::move(results[i]));
}

}  // namespace deberta::service
