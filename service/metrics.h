// ServiceMetrics: every Prometheus metric of the server, created once with
// typed handles (no lookups by string on the request path). Names follow
// Prometheus conventions with the prefix deberta_; durations in seconds.
#ifndef DEBERTA_SERVICE_METRICS_H_
#define DEBERTA_SERVICE_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/time/time.h"
#include "service/batch_task.h"

namespace deberta::service {

enum class Endpoint { kClassify = 0, kFillMask = 1, kGetModelInfo = 2 };
inline constexpr int kNumEndpoints = 3;
const char* EndpointName(Endpoint endpoint);  // "classify", "fill_mask", "get_model_info"

// Thread-safe. The registry is shared; this object must outlive any
// exposer serving it only as far as it owns the registry pointer.
class ServiceMetrics {
 public:
  explicit ServiceMetrics(std::shared_ptr<prometheus::Registry> registry);

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  // One finished RPC: its gRPC code name ("OK", "INVALID_ARGUMENT", ...)
  // and total duration.
  void RecordRequest(Endpoint endpoint, const std::string& code, absl::Duration duration);
  void RecordInputTokens(Endpoint endpoint, int64_t tokens);
  void RecordQueueLatency(TaskKind kind, absl::Duration waited);
  // One engine call: sequences, real and padded tokens, compute time.
  void RecordBatch(TaskKind kind, size_t sequences, int64_t real_tokens, int64_t padded_tokens,
                   absl::Duration inference);
  // reason: queue_full, deadline_exceeded, cancelled, invalid_argument,
  // shutting_down.
  void RecordRejection(const std::string& reason);
  void SetQueueDepth(TaskKind kind, size_t sequences, int64_t tokens);
  void AddInflight(int delta);
  void SetModelReady(bool ready);
  void SetDraining(bool draining);
  void SetBuildInfo(const std::map<std::string, std::string>& labels);
  // deberta_batcher_limit{limit="max_batch_size"|"max_batch_tokens"|
  // "max_queue_size"}; call once.
  void SetBatcherLimits(size_t max_batch_size, int64_t max_batch_tokens, size_t max_queue_size);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Counter>& rejections_;
  prometheus::Family<prometheus::Gauge>& build_info_;
  std::array<prometheus::Histogram*, kNumEndpoints> request_duration_{};
  std::array<prometheus::Counter*, kNumEndpoints> input_tokens_{};
  std::array<prometheus::Histogram*, kNumTaskKinds> queue_duration_{};
  std::array<prometheus::Histogram*, kNumTaskKinds> inference_duration_{};
  std::array<prometheus::Histogram*, kNumTaskKinds> batch_size_{};
  std::array<prometheus::Histogram*, kNumTaskKinds> batch_tokens_{};
  std::array<prometheus::Counter*, kNumTaskKinds> real_tokens_{};
  std::array<prometheus::Counter*, kNumTaskKinds> padding_tokens_{};
  std::array<prometheus::Gauge*, kNumTaskKinds> queue_sequences_{};
  std::array<prometheus::Gauge*, kNumTaskKinds> queue_tokens_{};
  prometheus::Gauge* inflight_;
  prometheus::Gauge* model_ready_;
  prometheus::Gauge* draining_;

  // Counters by label value are created on first use (codes, reasons).
  std::mutex mu_;
  std::map<std::pair<int, std::string>, prometheus::Counter*> request_counters_;
  std::map<std::string, prometheus::Counter*> rejection_counters_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_METRICS_H_
