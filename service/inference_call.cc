// InferenceCall: metrics at the answer, self-deletion at OnDone.
#include "service/inference_call.h"

#include "absl/strings/str_cat.h"
#include "service/protocols/in_process_call.h"
#include "service/status_util.h"

namespace deberta::service {

InferenceCall::InferenceCall(Endpoint endpoint, absl::Time deadline, ServiceMetrics* metrics,
                             std::function<void()> on_done, AccessLog* access_log, AccessRecord log)
    : endpoint_(endpoint),
      protocol_(log.protocol),
      deadline_(deadline),
      metrics_(metrics),
      on_done_(std::move(on_done)),
      start_(absl::Now()),
      cancelled_(std::make_shared<Cancellation>()),
      access_log_(access_log),
      log_(std::move(log)) {
  if (metrics_) metrics_->AddInflight(1);
}

void InferenceCall::FinishWithReportedStatus() {
  absl::Status status = status_.status();
  if (status.ok() && cancelled_->cancelled()) {
    status = absl::Now() >= deadline_ ? absl::DeadlineExceededError("deadline passed during inference")
                                      : absl::CancelledError("client cancelled the request");
  }
  Finish(status);
}

void InferenceCall::AddWork(int64_t sequences, int64_t tokens) {
  absl::MutexLock lock(&log_mu_);
  log_.sequences += sequences;
  log_.tokens += tokens;
}

void InferenceCall::ReportTiming(absl::Duration queued, absl::Duration inference) {
  absl::MutexLock lock(&log_mu_);
  log_.queue = std::max(log_.queue, queued);
  log_.inference = std::max(log_.inference, inference);
}

void InferenceCall::Finish(const absl::Status& status) {
  const grpc::Status answer = ToGrpcStatus(status);
  // The lock only when the record is read: gRPC deletes the call on another
  // thread through hand-offs the sanitizer cannot see, so a lock taken here
  // without need would look like a race with the mutex's destruction.
  if (access_log_ != nullptr || timing_context_ != nullptr) {
    absl::MutexLock lock(&log_mu_);
    if (access_log_ != nullptr) access_log_->Write(log_, EndpointName(endpoint_), start_, status.code());
    if (timing_context_ != nullptr) {
      timing_context_->AddTrailingMetadata(kQueueMicrosMetadata, absl::StrCat(absl::ToInt64Microseconds(log_.queue)));
      timing_context_->AddTrailingMetadata(kInferenceMicrosMetadata,
                                           absl::StrCat(absl::ToInt64Microseconds(log_.inference)));
      timing_context_->AddTrailingMetadata(kTokensMetadata, absl::StrCat(log_.tokens));
    }
  }
  // Metrics first, so that a client that has its answer sees it counted.
  if (metrics_) {
    metrics_->RecordRequest(endpoint_, protocol_, status.code(), absl::Now() - start_);
    metrics_->AddInflight(-1);
  }
  grpc::ServerUnaryReactor::Finish(answer);
}

void InferenceCall::OnDone() {
  if (on_done_) on_done_();
  delete this;
}

}  // namespace deberta::service
