// AccessLog: one line per request (--access_log=text|json), with the
// request id, method, protocol, status code, sequences, tokens, queue,
// inference and total milliseconds, the peer, and a W3C `traceparent`
// received with the call, so that traces correlate without a tracing SDK.
// Lines never carry token ids or text unless --log_payloads adds the
// request itself. Written whole under a lock, to standard output by default.
#ifndef DEBERTA_SERVICE_ACCESS_LOG_H_
#define DEBERTA_SERVICE_ACCESS_LOG_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "service/endpoint.h"

namespace deberta::service {

enum class AccessLogFormat { kOff, kText, kJson };

// "off", "text" or "json"; InvalidArgument naming --access_log otherwise.
absl::StatusOr<AccessLogFormat> ParseAccessLogFormat(absl::string_view text);
const char* AccessLogFormatName(AccessLogFormat format);

struct AccessRecord {
  absl::Time time;  // When the request arrived.
  std::string request_id;
  std::string method;  // "Classify", "FillMask", ...
  std::string model;   // The model the call ran on (or named); empty for the server's calls.
  Protocol protocol = Protocol::kGrpc;
  absl::StatusCode code = absl::StatusCode::kOk;
  int64_t sequences = 0;
  int64_t tokens = 0;
  absl::Duration queue;      // Longest wait of its sequences in the batcher.
  absl::Duration inference;  // Longest engine time of its batches.
  absl::Duration total;
  std::string peer;
  std::string traceparent;  // Empty unless well-formed.
  // The request message in protobuf's JSON mapping, only with
  // --log_payloads (it carries token ids and text); empty otherwise.
  std::string payload;
};

// `value` if it is a well-formed W3C traceparent ("00-<32 hex>-<16 hex>-<2
// hex>"), else empty: what clients send is never logged unchecked.
std::string ValidTraceparent(absl::string_view value);

// One line (without the newline) in `format` (text or json).
std::string FormatAccessRecord(const AccessRecord& record, AccessLogFormat format);

// Thread-safe.
class AccessLog {
 public:
  // `out` must outlive this object.
  AccessLog(AccessLogFormat format, std::ostream* out);
  // Writes `record` as a call of `method` that began at `start` and ends
  // now with `code` (nothing when the format is off).
  void Write(AccessRecord record, absl::string_view method, absl::Time start, absl::StatusCode code);

 private:
  const AccessLogFormat format_;
  absl::Mutex mu_;
  std::ostream* const out_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_ACCESS_LOG_H_
