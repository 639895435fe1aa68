// Special token ids from Hugging Face tokenizer files.
#include "model/special_tokens.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace deberta::model {
namespace {

// Null when the file does not exist; an error when it exists but is not a
// JSON object.
absl::StatusOr<nlohmann::json> ReadJsonObjectIfPresent(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return nlohmann::json(nullptr);
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a JSON object"));
  }
  return j;
}

// A token name is a string or {"content": "..."}.
std::string TokenText(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content") && j["content"].is_string()) {
    return j["content"].get<std::string>();
  }
  return "";
}

}  // namespace

absl::StatusOr<SpecialTokens> ReadSpecialTokens(const std::string& dir, SpecialTokens defaults) {
  const std::string config_path = dir + "/tokenizer_config.json";
  absl::StatusOr<nlohmann::json> config = ReadJsonObjectIfPresent(config_path);
  if (!config.ok()) return config.status();
  absl::StatusOr<nlohmann::json> map = ReadJsonObjectIfPresent(dir + "/special_tokens_map.json");
  if (!map.ok()) return map.status();
  if (config->is_null()) return defaults;
  std::map<std::string, int> id_of;
  if (auto it = config->find("added_tokens_decoder"); it != config->end() && it->is_object()) {
    for (const auto& [key, token] : it->items()) {
      int id = 0;
      if (!absl::SimpleAtoi(key, &id) || id < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            config_path, ": added_tokens_decoder key '", key, "' is not a token id"));
      }
      id_of[TokenText(token)] = id;
    }
  }
  SpecialTokens out = defaults;
  const std::pair<const char*, int*> fields[] = {{"pad_token", &out.pad}, {"cls_token", &out.cls},
                                                 {"sep_token", &out.sep}, {"unk_token", &out.unk},
                                                 {"mask_token", &out.mask}};
  for (auto [field, target] : fields) {
    std::string text = config->contains(field) ? TokenText((*config)[field]) : "";
    if (text.empty() && map->is_object() && map->contains(field)) text = TokenText((*map)[field]);
    if (auto it = id_of.find(text); !text.empty() && it != id_of.end()) *target = it->second;
  }
  return out;
}

}  // namespace deberta::model
