// DeviceRuntime for the CPU, and the choice between it and CUDA's.
#include "model/torch/device_runtime.h"

#include <ATen/ATen.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace deberta::model {
namespace {

// A CPU "graph": its work, run again on each replay.
class RerunGraph final : public DeviceGraph {
 public:
  explicit RerunGraph(std::function<void()> work) : work_(std::move(work)) {}
  void Replay() override { work_(); }

 private:
  const std::function<void()> work_;
};

class CpuRuntime final : public DeviceRuntime {
 public:
  void EnterThread() override {}
  at::Tensor HostTensor(at::IntArrayRef sizes, at::ScalarType dtype) override {
    return at::empty(sizes, at::TensorOptions().dtype(dtype));
  }
  at::Tensor ToDevice(const at::Tensor& host) override { return host; }
  std::optional<DeviceMemoryUse> Memory() const override { return std::nullopt; }
  std::unique_ptr<DeviceGraph> Capture(std::function<void()> work) override {
    return std::make_unique<RerunGraph>(std::move(work));
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceRuntime>> MakeDeviceRuntime(const c10::Device& device) {
  if (device.is_cpu()) return std::unique_ptr<DeviceRuntime>(new CpuRuntime());
#ifdef DEBERTA_WITH_CUDA
  if (device.is_cuda()) return MakeCudaRuntime(device);
#endif
  return absl::FailedPreconditionError(absl::StrCat(
      "device ", device.str(), ": this build of deberta-serve has no runtime for it (built against a "
      "LibTorch without CUDA)"));
}

}  // namespace deberta::model
