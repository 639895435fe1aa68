// TEI's (text-embeddings-inference's) requests in its JSON shapes, carried
// out as calls of our tasks on the in-process channel, and answered in
// TEI's shapes and by TEI's rules (tei_http.h lists them): the one mapping
// behind TEI's HTTP routes (tei_http.h) and TEI's gRPC API (tei_grpc.h),
// which turns its messages into these bodies and back.
#ifndef DEBERTA_SERVICE_PROTOCOLS_TEI_API_H_
#define DEBERTA_SERVICE_PROTOCOLS_TEI_API_H_

#include <cstdint>
#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "service/protocols/in_process_call.h"

namespace deberta::service {

// A request's calls, and the characters of text it sent, for TEI's headers.
struct TeiCalls : ModelCalls {
  using ModelCalls::ModelCalls;
  int64_t characters = 0;
};

// POST /predict's body -> [{score, label}] highest first (a list of those
// for a batch).
absl::StatusOr<nlohmann::json> TeiPredict(TeiCalls& calls, const nlohmann::json& body);
// POST /rerank's body -> [{index, score, text?}] highest first.
absl::StatusOr<nlohmann::json> TeiRerank(TeiCalls& calls, const nlohmann::json& body);
// POST /tokenize's body -> per text, [{id, text, special, start, stop}].
absl::StatusOr<nlohmann::json> TeiTokenize(TeiCalls& calls, const nlohmann::json& body);
// POST /decode's body -> [text].
absl::StatusOr<nlohmann::json> TeiDecode(TeiCalls& calls, const nlohmann::json& body);
// GET /info's answer.
absl::StatusOr<nlohmann::json> TeiInfo(TeiCalls& calls);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_TEI_API_H_
