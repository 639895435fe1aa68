// ServerConfig validation and description.
#include "service/server_config.h"

#include "absl/strings/str_cat.h"

namespace deberta::service {
namespace {

// "--name is <value>; it must be <rule>".
absl::Status OutOfRange(absl::string_view flag, int64_t value, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, " is ", value, "; it must be ", rule));
}

}  // namespace

absl::Status ServerConfig::Validate() const {
  if (port < 0 || port > 65535) return OutOfRange("port", port, "in [0, 65535]");
  if (http_port < -1 || http_port > 65535) return OutOfRange("http_port", http_port, "in [-1, 65535] (-1: off)");
  if (http_threads < 1 || http_threads > 1024) return OutOfRange("http_threads", http_threads, "in [1, 1024]");
  if (metrics_port < -1 || metrics_port > 65535) {
    return OutOfRange("metrics_port", metrics_port, "in [-1, 65535] (-1: off)");
  }
  if (models.control != ModelControl::kNone && models.repository.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--model_control=", ModelControlName(models.control),
                                                   " needs --model_repository"));
  }
  if (models.control == ModelControl::kExplicit && models.admin_api_keys_file.empty()) {
    return absl::InvalidArgumentError(
        "--model_control=explicit needs --admin_api_keys_file (the keys that may load and unload models)");
  }
  if (models.poll_interval < absl::Milliseconds(10)) {
    return absl::InvalidArgumentError(absl::StrCat("--repository_poll_interval is ",
                                                   absl::FormatDuration(models.poll_interval), "; it must be >= 10ms"));
  }
  if (models.memory_limit_bytes < 0) return OutOfRange("memory_limit", models.memory_limit_bytes, ">= 0");
  if (batcher.max_batch_size < 1) return OutOfRange("max_batch_size", 0, ">= 1");
  if (batcher.max_batch_tokens < 1) return OutOfRange("max_batch_tokens", batcher.max_batch_tokens, ">= 1");
  if (batcher.max_enqueued_tasks < 1) return OutOfRange("max_queue_size", 0, ">= 1");
  if (batcher.batch_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--batch_timeout is ", absl::FormatDuration(batcher.batch_timeout), "; it must be >= 0"));
  }
  if (drain_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--drain_timeout is ", absl::FormatDuration(drain_timeout), "; it must be >= 0"));
  }
  if (max_message_bytes < 1) return OutOfRange("max_message_bytes", max_message_bytes, ">= 1");
  if (metrics_threads < 1 || metrics_threads > 256) {
    return OutOfRange("metrics_threads", metrics_threads, "in [1, 256]");
  }
  if (max_concurrent_streams < 1) return OutOfRange("max_concurrent_streams", max_concurrent_streams, ">= 1");
  if (max_metadata_bytes < 1024) return OutOfRange("max_metadata_bytes", max_metadata_bytes, ">= 1024");
  for (const auto& [flag, value] : {std::pair<const char*, absl::Duration>{"metrics_request_timeout",
                                                                           metrics_request_timeout},
                                    {"max_connection_age", max_connection_age},
                                    {"max_connection_age_grace", max_connection_age_grace},
                                    {"min_client_ping_interval", min_client_ping_interval}}) {
    if (value <= absl::ZeroDuration() || value > absl::Hours(24 * 365)) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, " is ", absl::FormatDuration(value),
                                                     "; it must be > 0 and at most a year"));
    }
  }
  if (service.requests.max_sequences_per_request < 1) {
    return OutOfRange("max_sequences_per_request", service.requests.max_sequences_per_request, ">= 1");
  }
  const RequestOptions& requests = service.requests;
  if (requests.max_windows < 1) return OutOfRange("max_windows", requests.max_windows, ">= 1");
  if (requests.max_tokens_per_request < 1) {
    return OutOfRange("max_tokens_per_request", requests.max_tokens_per_request, ">= 1");
  }
  if (requests.max_rerank_documents < 1) {
    return OutOfRange("max_rerank_documents", requests.max_rerank_documents, ">= 1");
  }
  if (requests.max_top_k < 1) return OutOfRange("max_top_k", requests.max_top_k, ">= 1");
  if (requests.max_fill_mask_logits < 1) {
    return OutOfRange("max_fill_mask_logits", requests.max_fill_mask_logits, ">= 1");
  }
  if (requests.max_fill_mask_candidates < 1) {
    return OutOfRange("max_fill_mask_candidates", requests.max_fill_mask_candidates, ">= 1");
  }
  if (service.log_payloads && access_log == AccessLogFormat::kOff) {
    return absl::InvalidArgumentError("--log_payloads needs --access_log=text or --access_log=json");
  }
  return security.Validate();
}

std::string ServerConfig::Describe() const {
  const model::SpecialTokens& special = service.special_tokens;
  return absl::StrCat(
      "listen_address=", listen_address, " port=", port, " http_port=", http_port,
      " http_threads=", http_threads, " tei_compatible_routes=", tei_compatible_routes ? "true" : "false",
      " metrics_port=", metrics_port,
      " metrics_listen_address=", metrics_listen_address.empty() ? listen_address : metrics_listen_address,
      " metrics_threads=", metrics_threads,
      " metrics_request_timeout=", absl::FormatDuration(metrics_request_timeout),
      " max_concurrent_streams=", max_concurrent_streams,
      " max_connection_age=", absl::FormatDuration(max_connection_age),
      " max_connection_age_grace=", absl::FormatDuration(max_connection_age_grace),
      " min_client_ping_interval=", absl::FormatDuration(min_client_ping_interval),
      " max_metadata_bytes=", max_metadata_bytes,
      " tls=", !security.tls() ? "off" : security.tls_client_ca.empty() ? "on" : "mutual",
      " api_keys=", security.api_keys() ? "on" : "off",
      " reflection_without_api_key=", security.reflection_without_api_key ? "true" : "false",
      " metrics_without_api_key=", security.metrics_without_api_key ? "true" : "false",
      " credentials_reload_interval=", absl::FormatDuration(security.reload_interval),
      " access_log=", AccessLogFormatName(access_log), " log_payloads=", service.log_payloads ? "true" : "false",
      " max_batch_size=", batcher.max_batch_size, " max_batch_tokens=", batcher.max_batch_tokens,
      " batch_timeout=", absl::FormatDuration(batcher.batch_timeout),
      " max_queue_size=", batcher.max_enqueued_tasks,
      " batching=", batcher.length_aware ? "length_aware" : "first_come",
      " max_sequences_per_request=", service.requests.max_sequences_per_request,
      " truncate=", service.requests.truncate ? "true" : "false", " max_top_k=", service.requests.max_top_k,
      " max_windows=", service.requests.max_windows,
      " max_tokens_per_request=", service.requests.max_tokens_per_request,
      " max_rerank_documents=", service.requests.max_rerank_documents,
      " max_fill_mask_logits=", service.requests.max_fill_mask_logits,
      " max_fill_mask_candidates=", service.requests.max_fill_mask_candidates,
      " max_message_bytes=", max_message_bytes,
      " drain_timeout=", absl::FormatDuration(drain_timeout), " special_tokens={pad=", special.pad,
      " cls=", special.cls, " sep=", special.sep, " unk=", special.unk, " mask=", special.mask, "}",
      models.repository.empty() ? "" : absl::StrCat(" model_repository=", models.repository),
      models.model_name.empty() ? "" : absl::StrCat(" model_name=", models.model_name),
      " model_control=", ModelControlName(models.control),
      models.control == ModelControl::kPoll
          ? absl::StrCat(" repository_poll_interval=", absl::FormatDuration(models.poll_interval))
          : "",
      " memory_limit=", models.memory_limit_bytes,
      " allow_thread_oversubscription=", models.allow_thread_oversubscription ? "true" : "false");
}

}  // namespace deberta::service
