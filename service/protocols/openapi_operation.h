// One OpenAPI POST operation of an adapter for another server's API (whose
// shapes are JSON Schema written in the adapter, not generated from our
// proto): tagged "compatibility", JSON in and out, with that API's error
// body.
#ifndef DEBERTA_SERVICE_PROTOCOLS_OPENAPI_OPERATION_H_
#define DEBERTA_SERVICE_PROTOCOLS_OPENAPI_OPERATION_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace deberta::service {

inline constexpr char kCompatibilityTag[] = "compatibility";

inline nlohmann::json JsonContent(nlohmann::json schema) {
  return {{"application/json", {{"schema", std::move(schema)}}}};
}

// {"post": ...}: a path item of one operation.
inline nlohmann::json AdapterPost(const std::string& operation_id, const std::string& summary,
                                  nlohmann::json request_schema, nlohmann::json answer_schema,
                                  nlohmann::json error_schema) {
  return {{"post",
           {{"operationId", operation_id},
            {"summary", summary},
            {"tags", {kCompatibilityTag}},
            {"requestBody", {{"required", true}, {"content", JsonContent(std::move(request_schema))}}},
            {"responses",
             {{"200", {{"description", "The answer, in that API's shape."}, {"content", JsonContent(std::move(answer_schema))}}},
              {"default",
               {{"description", "The call failed: the HTTP status is the gRPC code's."},
                {"content", JsonContent(std::move(error_schema))}}}}}}}};
}

// A path parameter, for the operation's `parameters`.
inline nlohmann::json PathParameter(const std::string& name, const std::string& description) {
  return {{"name", name}, {"in", "path"}, {"required", true}, {"description", description}, {"schema", {{"type", "string"}}}};
}

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_OPENAPI_OPERATION_H_
