// SecurityConfig validation.
#include "service/security_config.h"

#include "absl/strings/str_cat.h"

namespace deberta::service {

absl::Status SecurityConfig::Validate() const {
  if (tls_cert.empty() != tls_key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together: set both or neither");
  }
  if (!tls_client_ca.empty() && !tls()) {
    return absl::InvalidArgumentError("--tls_client_ca (mutual TLS) needs --tls_cert and --tls_key");
  }
  if (reload_interval < absl::Seconds(1) || reload_interval > absl::Hours(24)) {
    return absl::InvalidArgumentError(absl::StrCat("--credentials_reload_interval is ",
                                                   absl::FormatDuration(reload_interval),
                                                   "; it must be between 1s and 24h"));
  }
  return absl::OkStatus();
}

}  // namespace deberta::service
