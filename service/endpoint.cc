// Names of endpoints (from the route table), protocols and rejection
// reasons, as metric label values.
#include "service/endpoint.h"

#include "service/rejection_reason.h"

namespace deberta::service {

const char* EndpointName(Endpoint endpoint) {
  for (const Route& route : kRoutes) {
    if (route.endpoint == endpoint) return route.label;
  }
  return "unknown";
}

const char* ProtocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kGrpc: return "grpc";
    case Protocol::kHttp: return "http";
    case Protocol::kHuggingFace: return "hf";
    case Protocol::kTei: return "tei";
    case Protocol::kCohere: return "cohere";
    case Protocol::kKserve: return "kserve";
  }
  return "unknown";
}

std::optional<Protocol> ProtocolFromName(std::string_view name) {
  for (int p = 0; p < kNumProtocols; ++p) {
    if (name == ProtocolName(static_cast<Protocol>(p))) return static_cast<Protocol>(p);
  }
  return std::nullopt;
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
    case RejectionReason::kUnknownModel: return "unknown_model";
    case RejectionReason::kModelUnavailable: return "model_unavailable";
  }
  return "unknown";
}

}  // namespace deberta::service
