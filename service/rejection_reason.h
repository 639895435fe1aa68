// RejectionReason: why a request or a sequence was refused before compute;
// the `reason` label of deberta_rejections_total. Every value is a series
// created at start-up, so dashboards see zeros rather than gaps.
#ifndef DEBERTA_SERVICE_REJECTION_REASON_H_
#define DEBERTA_SERVICE_REJECTION_REASON_H_

namespace deberta::service {

enum class RejectionReason {
  kQueueFull = 0,           // The endpoint's queue was full (RESOURCE_EXHAUSTED).
  kDeadlineExceeded = 1,    // The deadline passed while queued (a sequence).
  kCancelled = 2,           // The client went away while queued (a sequence).
  kInvalidArgument = 3,     // The request failed validation.
  kFailedPrecondition = 4,  // The served model lacks the head the endpoint needs.
  kShuttingDown = 5,        // The server was draining (UNAVAILABLE).
  kUnauthenticated = 6,     // No valid API key (UNAUTHENTICATED), or not an admin's.
  kUnknownModel = 7,        // No model of that name, or none named among several.
  kModelUnavailable = 8,    // The model is not loaded (loading, unloading, failed).
};
inline constexpr int kNumRejectionReasons = 9;

// "queue_full", "deadline_exceeded", "cancelled", "invalid_argument",
// "failed_precondition", "shutting_down", "unauthenticated",
// "unknown_model", "model_unavailable".
const char* RejectionReasonName(RejectionReason reason);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_REJECTION_REASON_H_
