// The Open Inference Protocol (v2) mapped onto our tasks, in its REST JSON
// shapes (kserve_http.h describes the inputs, outputs and parameters):
// the one mapping behind the REST routes (kserve_http.h) and the gRPC
// service (kserve_grpc.h), which turns its messages into these bodies and
// back.
#ifndef DEBERTA_SERVICE_PROTOCOLS_KSERVE_API_H_
#define DEBERTA_SERVICE_PROTOCOLS_KSERVE_API_H_

#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "service/protocols/in_process_call.h"

namespace deberta::service {

// The model's metadata ({name, versions, platform, inputs, outputs});
// NotFound when `version` (empty: any) is not the one served.
absl::StatusOr<nlohmann::json> KserveModelMetadata(ModelCalls& calls, const std::string& version);

// An inference request's body ({id?, parameters?, inputs, outputs?}) ->
// the answer ({model_name, model_version, id?, outputs}).
absl::StatusOr<nlohmann::json> KserveInfer(ModelCalls& calls, const std::string& version, const nlohmann::json& body);

// Whether `calls`' model is ready; NotFound for a version not served.
absl::StatusOr<bool> KserveModelReady(ModelCalls& calls, grpc::health::v1::Health::Stub& health,
                                      const std::string& version);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_KSERVE_API_H_
