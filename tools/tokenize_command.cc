// JSON-lines tokenization.
#include "tools/tokenize_command.h"

#include <iostream>
#include <optional>

#include "absl/flags/flag.h"
#include "model/text_encoding.h"
#include "model/tokenizer.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(bool, jsonl, false, "tokenize: JSON requests on stdin, one answer per line on stdout");

namespace deberta::tools {
namespace {

using nlohmann::json;

json Error(const std::string& message) { return json{{"error", message}}; }

json Answer(const model::Tokenizer& tokenizer, const json& request) {
  if (!request.is_object() || !request.contains("op") || !request["op"].is_string()) {
    return Error("a request is an object with a string \"op\"");
  }
  const std::string op = request["op"];
  auto text_of = [&](const char* field) -> std::optional<std::string> {
    auto it = request.find(field);
    if (it == request.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  if (op == "tokenize") {
    std::optional<std::string> text = text_of("text");
    if (!text) return Error("tokenize needs a string \"text\"");
    auto tokens = tokenizer.Tokenize(*text);
    if (!tokens.ok()) return Error(std::string(tokens.status().message()));
    json ids = json::array(), pieces = json::array();
    for (const model::Token& t : *tokens) {
      ids.push_back(t.id);
      pieces.push_back(t.piece);
    }
    return json{{"ids", ids}, {"pieces", pieces}};
  }
  if (op == "encode") {
    std::optional<std::string> text = text_of("text"), pair = text_of("text_pair");
    if (!text) return Error("encode needs a string \"text\"");
    int64_t max_length = INT32_MAX;
    model::Truncation truncation = model::Truncation::kNone;
    if (auto it = request.find("max_length"); it != request.end() && !it->is_null()) {
      if (!it->is_number_integer()) return Error("\"max_length\" must be an integer or null");
      max_length = it->get<int64_t>();
      truncation = model::Truncation::kLongestFirst;
    }
    std::optional<absl::string_view> pair_view;
    if (pair) pair_view = *pair;
    auto encoded = model::EncodeText(tokenizer, *text, pair_view, max_length, truncation);
    if (!encoded.ok()) return Error(std::string(encoded.status().message()));
    return json{{"input_ids", encoded->input_ids}, {"token_type_ids", encoded->token_type_ids}};
  }
  if (op == "encode_masked") {
    std::optional<std::string> text = text_of("text");
    if (!text) return Error("encode_masked needs a string \"text\"");
    std::vector<int32_t> positions;
    auto ids = model::EncodeMaskedText(tokenizer, *text, &positions);
    if (!ids.ok()) return Error(std::string(ids.status().message()));
    return json{{"input_ids", *ids}, {"mask_positions", positions}};
  }
  if (op == "decode") {
    auto it = request.find("ids");
    if (it == request.end() || !it->is_array()) return Error("decode needs an array \"ids\"");
    std::vector<int32_t> ids;
    for (const json& id : *it) {
      if (!id.is_number_integer()) return Error("\"ids\" must hold integers");
      ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
    auto text = tokenizer.Decode(ids);
    if (!text.ok()) return Error(std::string(text.status().message()));
    return json{{"text", *text}};
  }
  return Error("unknown op '" + op + "' (tokenize, encode, encode_masked, decode)");
}

}  // namespace

bool TokenizeOffline() { return absl::GetFlag(FLAGS_jsonl); }

int TokenizeCommand(const std::string& model_dir) {
  if (!absl::GetFlag(FLAGS_jsonl)) {
    std::cerr << "deberta-cli tokenize: offline use needs --jsonl (requests on standard input)\n";
    return 2;
  }
  auto tokenizer = model::LoadTokenizer(model_dir);
  if (!tokenizer.ok()) {
    std::cerr << "deberta-cli tokenize: " << tokenizer.status() << "\n";
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    const json request = json::parse(line, nullptr, /*allow_exceptions=*/false);
    const json answer = request.is_discarded() ? Error("not JSON") : Answer(**tokenizer, request);
    std::cout << answer.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace) << "\n"
              << std::flush;
  }
  return 0;
}

}  // namespace deberta::tools
