// Prometheus metric definitions.
#include "service/metrics.h"

#include <prometheus/counter.h>

namespace deberta::service {
namespace {

using prometheus::Histogram;

Histogram::BucketBoundaries DurationBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}
Histogram::BucketBoundaries SizeBuckets() { return {1, 2, 4, 8, 16, 32, 64, 128, 256}; }
Histogram::BucketBoundaries TokenBuckets() {
  return {16, 64, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
}

// A gauge with only the model's labels, the shape of every plain gauge here.
prometheus::Gauge& PlainGauge(prometheus::Registry& registry, const std::string& name, const std::string& help,
                              const std::map<std::string, std::string>& labels) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add(labels);
}

}  // namespace

std::map<std::string, std::string> ServiceMetrics::Labels(std::map<std::string, std::string> labels) const {
  if (!model_.name.empty()) {
    labels["model"] = model_.name;
    labels["version"] = model_.version;
  }
  return labels;
}

ServiceMetrics::ServiceMetrics(std::shared_ptr<prometheus::Registry> registry, ModelLabels model, Scope scope)
    : registry_(std::move(registry)),
      model_(std::move(model)),
      scope_(scope),
      build_info_(prometheus::BuildGauge()
                      .Name("deberta_build_info")
                      .Help("Always 1; labels describe the server build and model.")
                      .Register(*registry_)) {
  auto& requests = prometheus::BuildCounter()
                       .Name("deberta_requests_total")
                       .Help("Finished RPCs by endpoint, protocol (grpc, http, hf, tei, cohere, kserve) and gRPC status code.")
                       .Register(*registry_);
  auto& rejections = prometheus::BuildCounter()
                         .Name("deberta_rejections_total")
                         .Help("Sequences or requests refused before compute, by reason.")
                         .Register(*registry_);
  for (int r = 0; r < kNumRejectionReasons; ++r) {
    rejections_[r] = &rejections.Add(Labels({{"reason", RejectionReasonName(static_cast<RejectionReason>(r))}}));
  }
  auto& request_duration = prometheus::BuildHistogram()
                               .Name("deberta_request_duration_seconds")
                               .Help("RPC duration from arrival to reply.")
                               .Register(*registry_);
  auto& input_tokens = prometheus::BuildCounter()
                           .Name("deberta_input_tokens_total")
                           .Help("Tokens received in accepted requests.")
                           .Register(*registry_);
  for (int e = 0; e < kNumEndpoints; ++e) {
    // A model's series are of the endpoints that run on a model.
    if (!model_.name.empty() && !IsModelEndpoint(static_cast<Endpoint>(e))) continue;
    const std::string name = EndpointName(static_cast<Endpoint>(e));
    if (scope_ == Scope::kAll) input_tokens_[e] = &input_tokens.Add(Labels({{"endpoint", name}}));
    for (int p = 0; p < kNumProtocols; ++p) {
      const std::string protocol = ProtocolName(static_cast<Protocol>(p));
      request_duration_[e][p] =
          &request_duration.Add(Labels({{"endpoint", name}, {"protocol", protocol}}), DurationBuckets());
      for (int code = 0; code < kNumStatusCodes; ++code) {
        requests_[e][p][code] = &requests.Add(Labels({{"endpoint", name},
                                               {"protocol", protocol},
                                               {"code", absl::StatusCodeToString(static_cast<absl::StatusCode>(code))}}));
      }
    }
  }
  inflight_ = &PlainGauge(*registry_, "deberta_inflight_requests", "RPCs accepted and not yet answered.", Labels({}));
  model_ready_ = &PlainGauge(*registry_, "deberta_model_ready", "1 once the model is loaded and warmed up.", Labels({}));
  draining_ = &PlainGauge(*registry_, "deberta_draining", "1 while the server drains before exit.", Labels({}));
  if (scope_ == Scope::kServerCalls) return;
  auto& queue_duration = prometheus::BuildHistogram()
                             .Name("deberta_queue_duration_seconds")
                             .Help("Time a sequence waited in the batcher queue.")
                             .Register(*registry_);
  auto& inference_duration = prometheus::BuildHistogram()
                                 .Name("deberta_inference_duration_seconds")
                                 .Help("Engine time of one batch.")
                                 .Register(*registry_);
  auto& batch_size = prometheus::BuildHistogram()
                         .Name("deberta_batch_size")
                         .Help("Sequences per executed batch.")
                         .Register(*registry_);
  auto& batch_tokens = prometheus::BuildHistogram()
                           .Name("deberta_batch_tokens")
                           .Help("Padded tokens (sequences x longest) per executed batch.")
                           .Register(*registry_);
  auto& real_tokens = prometheus::BuildCounter()
                          .Name("deberta_real_tokens_total")
                          .Help("Non-padding tokens computed.")
                          .Register(*registry_);
  auto& padding_tokens = prometheus::BuildCounter()
                             .Name("deberta_padding_tokens_total")
                             .Help("Padding tokens computed (wasted work).")
                             .Register(*registry_);
  auto& abandoned_seconds = prometheus::BuildCounter()
                                .Name("deberta_abandoned_inference_seconds_total")
                                .Help("Engine time spent on sequences after their caller had gone (deadline passed or call cancelled).")
                                .Register(*registry_);
  auto& queue_sequences = prometheus::BuildGauge()
                              .Name("deberta_queue_sequences")
                              .Help("Sequences waiting in the batcher queue.")
                              .Register(*registry_);
  auto& queue_tokens = prometheus::BuildGauge()
                           .Name("deberta_queue_tokens")
                           .Help("Tokens waiting in the batcher queue.")
                           .Register(*registry_);
  for (int k = 0; k < kNumBatchedEndpoints; ++k) {
    const std::map<std::string, std::string> labels = Labels({{"endpoint", EndpointName(static_cast<Endpoint>(k))}});
    queue_duration_[k] = &queue_duration.Add(labels, DurationBuckets());
    inference_duration_[k] = &inference_duration.Add(labels, DurationBuckets());
    batch_size_[k] = &batch_size.Add(labels, SizeBuckets());
    batch_tokens_[k] = &batch_tokens.Add(labels, TokenBuckets());
    real_tokens_[k] = &real_tokens.Add(labels);
    padding_tokens_[k] = &padding_tokens.Add(labels);
    abandoned_seconds_[k] = &abandoned_seconds.Add(labels);
    queue_sequences_[k] = &queue_sequences.Add(labels);
    queue_tokens_[k] = &queue_tokens.Add(labels);
  }
}

void ServiceMetrics::RecordRequest(Endpoint endpoint, Protocol protocol, absl::StatusCode code,
                                   absl::Duration duration) {
  const int e = static_cast<int>(endpoint);
  const int p = static_cast<int>(protocol);
  if (request_duration_[e][p] == nullptr) return;  // Not an endpoint of this instance.
  request_duration_[e][p]->Observe(absl::ToDoubleSeconds(duration));
  int c = static_cast<int>(code);
  if (c < 0 || c >= kNumStatusCodes) c = static_cast<int>(absl::StatusCode::kUnknown);
  requests_[e][p][c]->Increment();
}

void ServiceMetrics::RecordInputTokens(Endpoint endpoint, int64_t tokens) {
  prometheus::Counter* counter = input_tokens_[static_cast<int>(endpoint)];
  if (counter != nullptr) counter->Increment(static_cast<double>(tokens));
}

void ServiceMetrics::RecordQueueLatency(Endpoint endpoint, absl::Duration waited) {
  queue_duration_[static_cast<int>(endpoint)]->Observe(absl::ToDoubleSeconds(waited));
}

void ServiceMetrics::RecordBatch(Endpoint endpoint, size_t sequences, int64_t real_tokens,
                                 int64_t padded_tokens, absl::Duration inference) {
  const int k = static_cast<int>(endpoint);
  batch_size_[k]->Observe(static_cast<double>(sequences));
  batch_tokens_[k]->Observe(static_cast<double>(padded_tokens));
  real_tokens_[k]->Increment(static_cast<double>(real_tokens));
  padding_tokens_[k]->Increment(static_cast<double>(padded_tokens - real_tokens));
  inference_duration_[k]->Observe(absl::ToDoubleSeconds(inference));
}

void ServiceMetrics::RecordAbandonedInference(Endpoint endpoint, absl::Duration wasted) {
  abandoned_seconds_[static_cast<int>(endpoint)]->Increment(absl::ToDoubleSeconds(wasted));
}

void ServiceMetrics::RecordRejection(RejectionReason reason) {
  rejections_[static_cast<int>(reason)]->Increment();
}

void ServiceMetrics::SetQueueDepth(Endpoint endpoint, size_t sequences, int64_t tokens) {
  queue_sequences_[static_cast<int>(endpoint)]->Set(static_cast<double>(sequences));
  queue_tokens_[static_cast<int>(endpoint)]->Set(static_cast<double>(tokens));
}

void ServiceMetrics::AddInflight(int delta) { inflight_->Increment(delta); }
void ServiceMetrics::SetReplicas(int replicas) {
  auto& batches = prometheus::BuildCounter()
                      .Name("deberta_replica_batches_total")
                      .Help("Batches run, by engine replica.")
                      .Register(*registry_);
  auto& busy = prometheus::BuildCounter()
                   .Name("deberta_replica_busy_seconds_total")
                   .Help("Seconds an engine replica spent running batches; its rate is the replica's utilization.")
                   .Register(*registry_);
  for (int r = 0; r < replicas; ++r) {
    const std::string replica = std::to_string(r);
    replica_batches_.push_back(&batches.Add(Labels({{"replica", replica}})));
    replica_busy_seconds_.push_back(&busy.Add(Labels({{"replica", replica}})));
  }
}

void ServiceMetrics::RecordReplicaBatch(int replica, absl::Duration inference) {
  if (replica < 0 || replica >= static_cast<int>(replica_batches_.size())) return;
  replica_batches_[replica]->Increment();
  replica_busy_seconds_[replica]->Increment(absl::ToDoubleSeconds(inference));
}

void ServiceMetrics::SetDeviceMemory(int replica, int64_t allocated_bytes, int64_t reserved_bytes) {
  absl::MutexLock lock(&device_mu_);
  if (device_allocated_ == nullptr) {
    device_allocated_ = &prometheus::BuildGauge()
                             .Name("deberta_device_memory_allocated_bytes")
                             .Help("Device memory held by live tensors (the allocator's in-use bytes), by replica.")
                             .Register(*registry_);
    device_reserved_ = &prometheus::BuildGauge()
                            .Name("deberta_device_memory_reserved_bytes")
                            .Help("Device memory the allocator holds: in use plus its cache, by replica.")
                            .Register(*registry_);
  }
  auto [it, added] = device_memory_.try_emplace(replica);
  if (added) {
    const std::string label = std::to_string(replica);
    it->second = {&device_allocated_->Add(Labels({{"replica", label}})), &device_reserved_->Add(Labels({{"replica", label}}))};
  }
  it->second.first->Set(static_cast<double>(allocated_bytes));
  it->second.second->Set(static_cast<double>(reserved_bytes));
}

void ServiceMetrics::SetModelReady(bool ready) { model_ready_->Set(ready ? 1 : 0); }
void ServiceMetrics::SetDraining(bool draining) { draining_->Set(draining ? 1 : 0); }

void ServiceMetrics::SetBatcherLimits(size_t max_batch_size, int64_t max_batch_tokens,
                                      size_t max_queue_size) {
  auto& family = prometheus::BuildGauge()
                     .Name("deberta_batcher_limit")
                     .Help("The batcher's configured limits, so dashboards and alerts can compute "
                           "batch fill and queue saturation.")
                     .Register(*registry_);
  family.Add(Labels({{"limit", "max_batch_size"}})).Set(static_cast<double>(max_batch_size));
  family.Add(Labels({{"limit", "max_batch_tokens"}})).Set(static_cast<double>(max_batch_tokens));
  family.Add(Labels({{"limit", "max_queue_size"}})).Set(static_cast<double>(max_queue_size));
}

void ServiceMetrics::SetBuildInfo(const std::map<std::string, std::string>& labels) {
  build_info_.Add(labels).Set(1);
}

}  // namespace deberta::service
