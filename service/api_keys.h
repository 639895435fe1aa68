// ApiKeys: the keys clients present as `authorization: Bearer <key>`, read
// from --api_keys_file (one key per line; blank lines and lines starting
// with '#' are skipped) and read again whenever the file changes, so keys
// are rotated without a restart. A reload that fails (file gone, no key)
// keeps the previous keys and logs why.
#ifndef DEBERTA_SERVICE_API_KEYS_H_
#define DEBERTA_SERVICE_API_KEYS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "service/file_watcher.h"

namespace deberta::service {

// The keys in a keys file's text; InvalidArgument if there is none.
absl::StatusOr<std::vector<std::string>> ParseApiKeys(absl::string_view text);

// Whether `presented` equals `expected`, in time that depends only on
// `expected`'s length (no early exit on the first differing byte).
bool ConstantTimeEquals(absl::string_view presented, absl::string_view expected);

// Thread-safe.
class ApiKeys {
 public:
  // Reads `path` (an error names it) and watches it every `reload_interval`.
  static absl::StatusOr<std::unique_ptr<ApiKeys>> Load(const std::string& path, absl::Duration reload_interval);

  // Whether `key` is one of the current keys. Every key is compared, each in
  // constant time.
  bool Accepts(absl::string_view key) const;

 private:
  ApiKeys(std::string path, std::vector<std::string> keys);
  void Reload();

  const std::string path_;
  mutable absl::Mutex mu_;
  std::vector<std::string> keys_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<FileWatcher> watcher_;  // Last: stopped first.
};

// The key in an `authorization` value: "Bearer <key>", or HTTP Basic auth
// with the key as the password (any user name), as Prometheus's basic_auth
// sends it. Schemes are case-insensitive; empty for any other form.
std::string PresentedKey(absl::string_view authorization);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_API_KEYS_H_
