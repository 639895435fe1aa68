// Special token ids from Hugging Face tokenizer files.
#include "service/special_tokens.h"

#include <fstream>
#include <map>
#include <sstream>

#include "nlohmann/json.hpp"

namespace deberta::service {
namespace {

nlohmann::json ReadJsonOrNull(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::stringstream s;
  s << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(s.str(), nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? nlohmann::json(nullptr) : j;
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

SpecialTokens ReadSpecialTokens(const std::string& dir, SpecialTokens defaults) {
  nlohmann::json config = ReadJsonOrNull(dir + "/tokenizer_config.json");
  nlohmann::json map = ReadJsonOrNull(dir + "/special_tokens_map.json");
  if (!config.is_object()) return defaults;
  std::map<std::string, int> id_of;
  if (auto it = config.find("added_tokens_decoder"); it != config.end() && it->is_object()) {
    for (const auto& [id, token] : it->items()) {
      try {
        id_of[TokenText(token)] = std::stoi(id);
      } catch (const std::exception&) {
      }
    }
  }
  SpecialTokens out = defaults;
  const std::pair<const char*, int*> fields[] = {{"pad_token", &out.pad}, {"cls_token", &out.cls},
                                                 {"sep_token", &out.sep}, {"unk_token", &out.unk},
                                                 {"mask_token", &out.mask}};
  for (auto [field, target] : fields) {
    std::string text = config.contains(field) ? TokenText(config[field]) : "";
    if (text.empty() && map.is_object() && map.contains(field)) text = TokenText(map[field]);
    if (auto it = id_of.find(text); !text.empty() && it != id_of.end()) *target = it->second;
  }
  return out;
}

}  // namespace deberta::service
