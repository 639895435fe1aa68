// Access log lines: text (key=value, values escaped) or JSON.
#include "service/access_log.h"

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace deberta::service {
namespace {

double Millis(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

// A client-supplied value for a text line: quoted and C-escaped when it
// holds anything but printable, unquoted-safe characters (no log injection).
std::string TextValue(absl::string_view value) {
  if (value.empty()) return "-";
  for (char c : value) {
    if (!absl::ascii_isgraph(static_cast<unsigned char>(c)) || c == '"' || c == '\\') {
      return absl::StrCat("\"", absl::CHexEscape(value), "\"");
    }
  }
  return std::string(value);
}

}  // namespace

absl::StatusOr<AccessLogFormat> ParseAccessLogFormat(absl::string_view text) {
  if (text == "off") return AccessLogFormat::kOff;
  if (text == "text") return AccessLogFormat::kText;
  if (text == "json") return AccessLogFormat::kJson;
  return absl::InvalidArgumentError(absl::StrCat("--access_log is '", text, "'; it must be off, text or json"));
}

const char* AccessLogFormatName(AccessLogFormat format) {
  switch (format) {
    case AccessLogFormat::kOff: return "off";
    case AccessLogFormat::kText: return "text";
    case AccessLogFormat::kJson: return "json";
  }
  return "off";
}

std::string ValidTraceparent(absl::string_view value) {
  // version-trace_id-parent_id-flags, lowercase hex, 2-32-16-2.
  if (value.size() != 55 || value[2] != '-' || value[35] != '-' || value[52] != '-') return "";
  for (size_t i = 0; i < value.size(); ++i) {
    if (i == 2 || i == 35 || i == 52) continue;
    const char c = value[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return "";
  }
  return std::string(value);
}

std::string FormatAccessRecord(const AccessRecord& r, AccessLogFormat format) {
  const std::string time = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", r.time, absl::UTCTimeZone());
  const std::string code = absl::StatusCodeToString(r.code);
  if (format == AccessLogFormat::kJson) {
    nlohmann::json line = {{"time", time},
                           {"request_id", r.request_id},
                           {"method", r.method},
                           {"model", r.model},
                           {"protocol", ProtocolName(r.protocol)},
                           {"code", code},
                           {"sequences", r.sequences},
                           {"tokens", r.tokens},
                           {"queue_ms", Millis(r.queue)},
                           {"inference_ms", Millis(r.inference)},
                           {"total_ms", Millis(r.total)},
                           {"peer", r.peer},
                           {"traceparent", r.traceparent}};
    if (!r.payload.empty()) {
      // Nested as JSON (it is protobuf's JSON mapping of the request).
      nlohmann::json payload = nlohmann::json::parse(r.payload, nullptr, /*allow_exceptions=*/false);
      line["payload"] = payload.is_discarded() ? nlohmann::json(r.payload) : std::move(payload);
    }
    // Invalid UTF-8 from a client is replaced, never thrown on.
    return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string line = absl::StrFormat(
      "%s %s %s request_id=%s code=%s sequences=%d tokens=%d queue_ms=%.3f inference_ms=%.3f total_ms=%.3f "
      "peer=%s traceparent=%s",
      time, ProtocolName(r.protocol), r.method, TextValue(r.request_id), code, r.sequences, r.tokens, Millis(r.queue),
      Millis(r.inference), Millis(r.total), TextValue(r.peer), TextValue(r.traceparent));
  if (!r.model.empty()) absl::StrAppend(&line, " model=", TextValue(r.model));
  if (!r.payload.empty()) absl::StrAppend(&line, " payload=", TextValue(r.payload));
  return line;
}

AccessLog::AccessLog(AccessLogFormat format, std::ostream* out) : format_(format), out_(out) {}

void AccessLog::Write(AccessRecord record, absl::string_view method, absl::Time start, absl::StatusCode code) {
  if (format_ == AccessLogFormat::kOff) return;
  record.time = start;
  record.method = std::string(method);
  record.code = code;
  record.total = absl::Now() - start;
  const std::string line = FormatAccessRecord(record, format_);
  absl::MutexLock lock(&mu_);
  *out_ << line << '\n' << std::flush;
}

}  // namespace deberta::service
