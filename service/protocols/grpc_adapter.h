// What the gRPC adapters (TEI's gRPC API, tei_grpc.h; KServe's Open
// Inference Protocol, kserve_grpc.h) share: their services are registered
// on the server's gRPC port before it starts, and each of their requests
// becomes calls of our tasks on the in-process channel, made on the
// adapters' own threads (adapter_workers.h) with the caller's key,
// traceparent, deadline and cancellation (CallOrigin::FromGrpc). The
// channel exists only once the server has started (SetChannel); a call
// before that is UNAVAILABLE.
#ifndef DEBERTA_SERVICE_PROTOCOLS_GRPC_ADAPTER_H_
#define DEBERTA_SERVICE_PROTOCOLS_GRPC_ADAPTER_H_

#include <grpcpp/channel.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "service/protocols/adapter_workers.h"
#include "service/status_util.h"

namespace deberta::service {

class GrpcAdapterBackend {
 public:
  using Stub = serving::v1::InferenceService::Stub;
  using HealthStub = grpc::health::v1::Health::Stub;

  // `threads` workers, at most `max_queued` requests waiting for one.
  GrpcAdapterBackend(int threads, size_t max_queued) : workers_(threads, max_queued) {}

  // The server's in-process channel, once it has started; null once it has
  // stopped (later calls: UNAVAILABLE).
  void SetChannel(const std::shared_ptr<grpc::Channel>& channel);

  // A unary call: `job` runs on the workers with the stubs and its status
  // finishes the call (UNAVAILABLE before SetChannel, RESOURCE_EXHAUSTED
  // when the workers' queue is full).
  using Job = std::function<absl::Status(Stub& stub, HealthStub& health)>;
  grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* context, Job job);

  // For streams: runs `work` on the workers with the stubs, or calls
  // `refused` with why it cannot run (then `work` never runs).
  using Work = std::function<void(Stub& stub, HealthStub& health)>;
  void Schedule(Work work, std::function<void(const absl::Status&)> refused);

 private:
  AdapterWorkers workers_;
  mutable absl::Mutex mu_;
  std::shared_ptr<Stub> stub_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<HealthStub> health_ ABSL_GUARDED_BY(mu_);
};

// A bidirectional stream answered one request at a time, in order: each
// request read is handed to `handle` on the workers (with the stubs), its
// answer written, then the next request read; the first failure ends the
// stream with its status, and the client's end of writing ends it OK.
template <typename Request, typename Response>
class SerialStream : public grpc::ServerBidiReactor<Request, Response> {
 public:
  using Handle = std::function<absl::Status(const Request&, Response*, GrpcAdapterBackend::Stub&,
                                            GrpcAdapterBackend::HealthStub&)>;

  SerialStream(GrpcAdapterBackend* backend, Handle handle) : backend_(backend), handle_(std::move(handle)) {
    this->StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) return this->Finish(grpc::Status::OK);
    response_.Clear();
    backend_->Schedule(
        [this](GrpcAdapterBackend::Stub& stub, GrpcAdapterBackend::HealthStub& health) {
          absl::Status status = handle_(request_, &response_, stub, health);
          if (!status.ok()) {
            this->Finish(ToGrpcStatus(status));
          } else {
            this->StartWrite(&response_);
          }
        },
        [this](const absl::Status& why) { this->Finish(ToGrpcStatus(why)); });
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return this->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
    this->StartRead(&request_);
  }

  void OnDone() override { delete this; }

 private:
  GrpcAdapterBackend* const backend_;
  const Handle handle_;
  Request request_;
  Response response_;
};

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_PROTOCOLS_GRPC_ADAPTER_H_
