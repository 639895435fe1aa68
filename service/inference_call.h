// InferenceCall: the reactor of every RPC of the service, in the manner
// of the reactor classes of gRPC's route_guide callback example. It owns
// the call's state (start time, first error, the cancellation flag its
// tasks read) and deletes itself in OnDone; nothing else deletes it.
#ifndef DEBERTA_SERVICE_INFERENCE_CALL_H_
#define DEBERTA_SERVICE_INFERENCE_CALL_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/synchronization/mutex.h"
#include "service/access_log.h"
#include "service/cancellation.h"
#include "service/endpoint.h"
#include "service/metrics.h"
#include "service/thread_safe_status.h"

namespace deberta::service {

// Thread-safe: tasks report from the batcher thread while gRPC may call
// OnCancel from another. Lives from the handler until gRPC's OnDone.
class InferenceCall final : public grpc::ServerUnaryReactor {
 public:
  // `on_done` runs in OnDone, before the call deletes itself. `metrics` may
  // be null; it and `on_done`'s captures must outlive the call. `deadline`
  // is the client's (infinite when it set none).
  // `access_log` may be null (no line); `log` starts the call's line
  // (request id, peer, traceparent).
  InferenceCall(Endpoint endpoint, absl::Time deadline, ServiceMetrics* metrics,
                std::function<void()> on_done, AccessLog* access_log = nullptr, AccessRecord log = {});

  // The client's deadline (infinite when it set none).
  absl::Time deadline() const { return deadline_; }
  // The mark this call's tasks read: made once the client has gone away.
  std::shared_ptr<const Cancellation> cancelled() const { return cancelled_; }
  // Records one task's outcome; the call answers with the first error.
  void ReportTask(const absl::Status& status) { status_.Update(status); }
  // For the access log: the sequences and tokens scheduled, and each
  // task's queue and engine time (the line keeps the longest).
  void AddWork(int64_t sequences, int64_t tokens);
  void ReportTiming(absl::Duration queued, absl::Duration inference);
  absl::Status ReportedStatus() const { return status_.status(); }
  // Answers with the first error reported, or OK; but a call whose client
  // has gone is recorded as what it was (DeadlineExceeded or Cancelled),
  // never OK, even when its tasks had already reached the engine.
  void FinishWithReportedStatus();
  // Records the request metric, then answers. Call once; after it the call
  // may be deleted at any moment, so touch nothing of it afterwards.
  void Finish(const absl::Status& status);

  // Also answers the call's longest queue and engine times and its tokens
  // as trailing metadata (in_process_call.h), for the HTTP adapters whose
  // APIs report them (TEI's x-queue-time, ...). Before Finish; `context`
  // is the call's own.
  void SendTimingTo(grpc::CallbackServerContext* context) { timing_context_ = context; }

  void OnCancel() override { cancelled_->Cancel(absl::Now()); }
  void OnDone() override;

 private:
  const Endpoint endpoint_;
  const Protocol protocol_;  // From `log`, which is moved after it.
  const absl::Time deadline_;
  ServiceMetrics* const metrics_;
  const std::function<void()> on_done_;
  const absl::Time start_;
  const std::shared_ptr<Cancellation> cancelled_;
  ThreadSafeStatus status_;
  AccessLog* const access_log_;  // May be null.
  absl::Mutex log_mu_;
  AccessRecord log_ ABSL_GUARDED_BY(log_mu_);
  grpc::CallbackServerContext* timing_context_ = nullptr;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_INFERENCE_CALL_H_
