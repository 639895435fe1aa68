// API keys: parsing, constant-time comparison, reload on change.
#include "service/api_keys.h"

#include <glog/logging.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "model/read_file.h"

namespace deberta::service {

absl::StatusOr<std::vector<std::string>> ParseApiKeys(absl::string_view text) {
  std::vector<std::string> keys;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    keys.emplace_back(line);
  }
  if (keys.empty()) return absl::InvalidArgumentError("no API key in the file (one key per line)");
  return keys;
}

bool ConstantTimeEquals(absl::string_view presented, absl::string_view expected) {
  // Differences accumulate without branching; the loop runs over the
  // expected key whatever is presented.
  unsigned char diff = presented.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char p = i < presented.size() ? static_cast<unsigned char>(presented[i]) : 0;
    diff |= p ^ static_cast<unsigned char>(expected[i]);
  }
  return diff == 0;
}

std::string PresentedKey(absl::string_view authorization) {
  authorization = absl::StripAsciiWhitespace(authorization);
  const size_t space = authorization.find(' ');
  if (space == absl::string_view::npos) return "";
  const absl::string_view scheme = authorization.substr(0, space);
  const absl::string_view value = absl::StripAsciiWhitespace(authorization.substr(space + 1));
  if (absl::EqualsIgnoreCase(scheme, "bearer")) return std::string(value);
  if (!absl::EqualsIgnoreCase(scheme, "basic")) return "";
  std::string decoded;
  if (!absl::Base64Unescape(value, &decoded)) return "";
  const size_t colon = decoded.find(':');
  return colon == std::string::npos ? "" : decoded.substr(colon + 1);
}

ApiKeys::ApiKeys(std::string path, std::vector<std::string> keys) : path_(std::move(path)), keys_(std::move(keys)) {}

absl::StatusOr<std::unique_ptr<ApiKeys>> ApiKeys::Load(const std::string& path, absl::Duration reload_interval) {
  absl::StatusOr<std::string> text = model::ReadFileToString(path);
  if (!text.ok()) return absl::InvalidArgumentError(absl::StrCat("--api_keys_file: ", text.status().message()));
  absl::StatusOr<std::vector<std::string>> keys = ParseApiKeys(*text);
  if (!keys.ok()) return absl::InvalidArgumentError(absl::StrCat("--api_keys_file ", path, ": ", keys.status().message()));
  std::unique_ptr<ApiKeys> api_keys(new ApiKeys(path, *std::move(keys)));
  ApiKeys* self = api_keys.get();
  api_keys->watcher_ = std::make_unique<FileWatcher>(std::vector<std::string>{path}, reload_interval,
                                                     [self] { self->Reload(); });
  return api_keys;
}

void ApiKeys::Reload() {
  absl::StatusOr<std::string> text = model::ReadFileToString(path_);
  absl::StatusOr<std::vector<std::string>> keys =
      text.ok() ? ParseApiKeys(*text) : absl::StatusOr<std::vector<std::string>>(text.status());
  if (!keys.ok()) {
    LOG(WARNING) << "API keys: " << path_ << " changed but cannot be used (" << keys.status().message()
                 << "); keeping the previous keys";
    return;
  }
  LOG(INFO) << "API keys: reloaded " << keys->size() << " key(s) from " << path_;
  absl::MutexLock lock(&mu_);
  keys_ = *std::move(keys);
}

bool ApiKeys::Accepts(absl::string_view key) const {
  if (key.empty()) return false;
  absl::MutexLock lock(&mu_);
  bool accepted = false;
  for (const std::string& expected : keys_) accepted |= ConstantTimeEquals(key, expected);
  return accepted;
}

}  // namespace deberta::service
