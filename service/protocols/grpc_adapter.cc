// The gRPC adapters' stubs on the in-process channel, and their calls
// handed to the workers.
#include "service/protocols/grpc_adapter.h"

#include <string>
#include <utility>

#include "service/status_util.h"

namespace deberta::service {

void GrpcAdapterBackend::SetChannel(const std::shared_ptr<grpc::Channel>& channel) {
  std::shared_ptr<Stub> stub;
  std::shared_ptr<HealthStub> health;
  if (channel != nullptr) {
    stub = std::make_shared<Stub>(channel);
    health = std::shared_ptr<HealthStub>(grpc::health::v1::Health::NewStub(channel));
  }
  absl::MutexLock lock(&mu_);
  stub_ = std::move(stub);
  health_ = std::move(health);
}

void GrpcAdapterBackend::Schedule(Work work, std::function<void(const absl::Status&)> refused) {
  std::shared_ptr<Stub> stub;
  std::shared_ptr<HealthStub> health;
  {
    absl::MutexLock lock(&mu_);
    stub = stub_;
    health = health_;
  }
  if (stub == nullptr) return refused(absl::UnavailableError("the server is starting"));
  const bool queued = workers_.Schedule([work = std::move(work), stub, health] { work(*stub, *health); });
  if (!queued) refused(absl::ResourceExhaustedError("too many requests are waiting for the adapters' threads"));
}

grpc::ServerUnaryReactor* GrpcAdapterBackend::Unary(grpc::CallbackServerContext* context, Job job) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  Schedule(
      [reactor, job = std::move(job)](Stub& stub, HealthStub& health) {
        reactor->Finish(ToGrpcStatus(job(stub, health)));
      },
      [reactor](const absl::Status& why) { reactor->Finish(ToGrpcStatus(why)); });
  return reactor;
}

}  // namespace deberta::service
