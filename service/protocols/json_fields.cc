// Typed reads of a JSON object's fields, errors naming the field.
#include "service/protocols/json_fields.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "service/status_util.h"

namespace deberta::service {

JsonFields::JsonFields(const nlohmann::json& object, std::string where) : object_(object), where_(std::move(where)) {}

absl::StatusOr<nlohmann::json> JsonFields::ParseObject(std::string_view body) {
  nlohmann::json parsed = nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return absl::InvalidArgumentError("the body is not JSON");
  if (!parsed.is_object()) return absl::InvalidArgumentError("the body must be a JSON object");
  return parsed;
}

std::string JsonFields::Name(std::string_view key) const {
  return where_.empty() ? std::string(key) : absl::StrCat(where_, ".", std::string(key));
}

absl::Status JsonFields::WrongType(const char* key, const char* wanted) const {
  return absl::InvalidArgumentError(absl::StrCat(Name(key), " must be ", wanted, ", not ", object_.at(key).dump()));
}

const nlohmann::json* JsonFields::Value(const char* key) {
  read_.insert(key);
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::StatusOr<std::optional<std::string>> JsonFields::String(const char* key) {
  const nlohmann::json* value = Value(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) return WrongType(key, "a string");
  return value->get<std::string>();
}

absl::StatusOr<std::optional<int64_t>> JsonFields::Int(const char* key) {
  const nlohmann::json* value = Value(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number_integer()) return WrongType(key, "an integer");
  return value->get<int64_t>();
}

absl::StatusOr<std::optional<double>> JsonFields::Number(const char* key) {
  const nlohmann::json* value = Value(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) return WrongType(key, "a number");
  return value->get<double>();
}

absl::StatusOr<std::optional<bool>> JsonFields::Bool(const char* key) {
  const nlohmann::json* value = Value(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) return WrongType(key, "true or false");
  return value->get<bool>();
}

absl::StatusOr<std::optional<std::vector<std::string>>> JsonFields::Strings(const char* key) {
  const nlohmann::json* value = Value(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_array()) return WrongType(key, "a list of strings");
  std::vector<std::string> out;
  for (const nlohmann::json& item : *value) {
    if (!item.is_string()) return WrongType(key, "a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

absl::Status JsonFields::NoOtherKeys(std::initializer_list<const char*> ignored) const {
  for (const auto& item : object_.items()) {
    if (read_.count(item.key()) > 0) continue;
    bool skip = false;
    for (const char* key : ignored) skip = skip || item.key() == key;
    if (!skip) return absl::InvalidArgumentError(absl::StrCat("unknown field ", Name(item.key())));
  }
  return absl::OkStatus();
}

void WriteAnswer(httplib::Response& response, const absl::StatusOr<nlohmann::json>& answer, const char* error_key) {
  nlohmann::json body;
  if (answer.ok()) {
    body = *answer;
  } else {
    response.status = HttpStatusOf(answer.status());
    body = {{error_key, std::string(answer.status().message())}};
  }
  response.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

}  // namespace deberta::service
