// Reading the JSON bodies of the adapters for other servers' APIs
// (Hugging Face, TEI, Cohere, KServe), which have no proto of ours to parse
// into: each field read with its type checked, an error naming the field
// and what it should be, and, after the reads, any key that none of them
// asked for named as an error (a misspelt parameter is not silently
// dropped).
#ifndef DEBERTA_SERVICE_PROTOCOLS_JSON_FIELDS_H_
#define DEBERTA_SERVICE_PROTOCOLS_JSON_FIELDS_H_

#include <httplib.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace deberta::service {

class JsonFields {
 public:
  // `object` must outlive this; `where` prefixes error messages ("parameters").
  JsonFields(const nlohmann::json& object, std::string where);

  // The body as a JSON object; InvalidArgument when it is not JSON or not
  // an object.
  static absl::StatusOr<nlohmann::json> ParseObject(std::string_view body);

  // Each is nullopt when the key is absent or null; InvalidArgument when
  // it holds another type.
  absl::StatusOr<std::optional<std::string>> String(const char* key);
  absl::StatusOr<std::optional<int64_t>> Int(const char* key);
  absl::StatusOr<std::optional<double>> Number(const char* key);
  absl::StatusOr<std::optional<bool>> Bool(const char* key);
  absl::StatusOr<std::optional<std::vector<std::string>>> Strings(const char* key);
  // Any JSON value, for fields of several shapes; nullptr when absent.
  const nlohmann::json* Value(const char* key);

  // InvalidArgument naming the first key that no read asked for and that
  // is not in `ignored`.
  absl::Status NoOtherKeys(std::initializer_list<const char*> ignored = {}) const;

  // "<where>.<key>" (or "<key>"), for messages.
  std::string Name(std::string_view key) const;

 private:
  absl::Status WrongType(const char* key, const char* wanted) const;

  const nlohmann::json& object_;
  std::string where_;
  std::set<std::string, std::less<>> read_;
};

// Writes `answer` as the JSON body, or its error as {"<error_key>": message}
// with the HTTP status of its code (status_util.h): the error shape of the
// Hugging Face and Open Inference Protocol APIs ("error") and Cohere's
// ("message").
void WriteAnswer(httplib::Response& response, const absl::StatusOr<nlohmann::json>& answer,
                 const char* error_key = "error");

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_JSON_FIELDS_H_
