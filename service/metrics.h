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
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "service/endpoint.h"
#include "service/rejection_reason.h"

namespace deberta::service {

// Every status code the requests counter can carry: the canonical codes
// 0 (OK) to 16 (UNAUTHENTICATED), shared by absl and gRPC.
inline constexpr int kNumStatusCodes = 17;

// Thread-safe, and lock-free on the request path: every series (each
// endpoint x code, each rejection reason) is created in the constructor.
// The registry is shared; this object must outlive any exposer serving it
// only as far as it owns the registry pointer.
class ServiceMetrics {
 public:
  // The model a ServiceMetrics counts for: every series it creates carries
  // `model` and `version` labels. Empty name: no such labels (the server's
  // own series, e.g. calls refused before a model was chosen).
  struct ModelLabels {
    std::string name;
    std::string version;
  };

  // What an instance counts: everything (a model's, or a batcher's in
  // tests), or only the server's calls (requests, their durations,
  // rejections, in-flight calls, readiness, draining): calls refused
  // before a model was found.
  enum class Scope { kAll, kServerCalls };

  explicit ServiceMetrics(std::shared_ptr<prometheus::Registry> registry, ModelLabels model = {},
                          Scope scope = Scope::kAll);

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  // One finished RPC: how it came (the `protocol` label, "grpc" or
  // "http"), its status code (the `code` label is the code's canonical
  // name, "OK", "INVALID_ARGUMENT", ...) and total duration.
  void RecordRequest(Endpoint endpoint, Protocol protocol, absl::StatusCode code, absl::Duration duration);
  void RecordInputTokens(Endpoint endpoint, int64_t tokens);
  // Batched endpoints only (kClassify, kFillMask) from here to SetQueueDepth.
  void RecordQueueLatency(Endpoint endpoint, absl::Duration waited);
  // One engine call: sequences, real and padded tokens, compute time.
  void RecordBatch(Endpoint endpoint, size_t sequences, int64_t real_tokens, int64_t padded_tokens,
                   absl::Duration inference);
  // Engine time of a batch spent on sequences whose caller had gone by its
  // end (cancelled, or past the deadline): the batch's time times their
  // share of it.
  void RecordAbandonedInference(Endpoint endpoint, absl::Duration wasted);
  // deberta_replica_batches_total{replica} and
  // deberta_replica_busy_seconds_total{replica} (engine time; its rate is
  // the replica's utilization), for replicas "0" to replicas-1. Call once,
  // before the first RecordReplicaBatch (the batcher does).
  void SetReplicas(int replicas);
  // One batch finished on `replica`, which ran it for `inference`.
  // Ignored for a replica SetReplicas did not create.
  void RecordReplicaBatch(int replica, absl::Duration inference);
  // A replica's device memory after a batch (GPU engines):
  // deberta_device_memory_{allocated,reserved}_bytes{replica}, created at
  // a replica's first call, so a CPU server has none.
  void SetDeviceMemory(int replica, int64_t allocated_bytes, int64_t reserved_bytes);
  void RecordRejection(RejectionReason reason);
  void SetQueueDepth(Endpoint endpoint, size_t sequences, int64_t tokens);
  void AddInflight(int delta);
  void SetModelReady(bool ready);
  void SetDraining(bool draining);
  void SetBuildInfo(const std::map<std::string, std::string>& labels);
  // deberta_batcher_limit{limit="max_batch_size"|"max_batch_tokens"|
  // "max_queue_size"}; call once.
  void SetBatcherLimits(size_t max_batch_size, int64_t max_batch_tokens, size_t max_queue_size);

 private:
  // `labels` plus the model's.
  std::map<std::string, std::string> Labels(std::map<std::string, std::string> labels) const;

  std::shared_ptr<prometheus::Registry> registry_;
  const ModelLabels model_;
  const Scope scope_;
  prometheus::Family<prometheus::Gauge>& build_info_;
  template <typename T>
  using PerEndpointAndProtocol = std::array<std::array<T, kNumProtocols>, kNumEndpoints>;
  PerEndpointAndProtocol<std::array<prometheus::Counter*, kNumStatusCodes>> requests_{};
  std::array<prometheus::Counter*, kNumRejectionReasons> rejections_{};
  PerEndpointAndProtocol<prometheus::Histogram*> request_duration_{};
  std::array<prometheus::Counter*, kNumEndpoints> input_tokens_{};
  std::array<prometheus::Histogram*, kNumBatchedEndpoints> queue_duration_{};
  std::array<prometheus::Histogram*, kNumBatchedEndpoints> inference_duration_{};
  std::array<prometheus::Histogram*, kNumBatchedEndpoints> batch_size_{};
  std::array<prometheus::Histogram*, kNumBatchedEndpoints> batch_tokens_{};
  std::array<prometheus::Counter*, kNumBatchedEndpoints> real_tokens_{};
  std::array<prometheus::Counter*, kNumBatchedEndpoints> abandoned_seconds_{};
  std::array<prometheus::Counter*, kNumBatchedEndpoints> padding_tokens_{};
  std::array<prometheus::Gauge*, kNumBatchedEndpoints> queue_sequences_{};
  std::array<prometheus::Gauge*, kNumBatchedEndpoints> queue_tokens_{};
  prometheus::Gauge* inflight_;
  prometheus::Gauge* model_ready_;
  prometheus::Gauge* draining_;
  std::vector<prometheus::Counter*> replica_batches_;  // Set once by SetReplicas.
  std::vector<prometheus::Counter*> replica_busy_seconds_;
  // Created by SetDeviceMemory, one pair per replica, from several
  // executor threads.
  absl::Mutex device_mu_;
  prometheus::Family<prometheus::Gauge>* device_allocated_ ABSL_GUARDED_BY(device_mu_) = nullptr;
  prometheus::Family<prometheus::Gauge>* device_reserved_ ABSL_GUARDED_BY(device_mu_) = nullptr;
  std::map<int, std::pair<prometheus::Gauge*, prometheus::Gauge*>> device_memory_ ABSL_GUARDED_BY(device_mu_);
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_METRICS_H_
