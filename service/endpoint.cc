// Names of endpoints, protocols and rejection reasons, as metric label values.
#include "service/endpoint.h"

#include "service/rejection_reason.h"

namespace deberta::service {

const char* EndpointName(Endpoint endpoint) {
  switch (endpoint) {
    case Endpoint::kClassify: return "classify";
    case Endpoint::kFillMask: return "fill_mask";
    case Endpoint::kGetModelInfo: return "get_model_info";
    case Endpoint::kTokenize: return "tokenize";
    case Endpoint::kDetokenize: return "detokenize";
    case Endpoint::kZeroShotClassify: return "zero_shot_classify";
  }
  return "unknown";
}

const char* ProtocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kGrpc: return "grpc";
    case Protocol::kHttp: return "http";
  }
  return "unknown";
}

const char* RejectionReasonName(RejectionReason reason) {
  switch (reason) {
    case RejectionReason::kQueueFull: return "queue_full";
    case RejectionReason::kDeadlineExceeded: return "deadline_exceeded";
    case RejectionReason::kCancelled: return "cancelled";
    case RejectionReason::kInvalidArgument: return "invalid_argument";
    case RejectionReason::kFailedPrecondition: return "failed_precondition";
    case RejectionReason::kShuttingDown: return "shutting_down";
    case RejectionReason::kUnauthenticated: return "unauthenticated";
  }
  return "unknown";
}

}  // namespace deberta::service
