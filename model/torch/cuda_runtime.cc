// DeviceRuntime on a CUDA device. Compiled only when LibTorch has CUDA
// (CMake: TORCH_CUDA_LIBRARIES), so the CPU build needs no CUDA headers.
#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include "model/torch/device_runtime.h"

namespace deberta::model {
namespace {

class CudaRuntime final : public DeviceRuntime {
 public:
  explicit CudaRuntime(const c10::Device& device)
      : device_(device),
        // A stream of the engine's own, not the default stream, so that its
        // copies and kernels do not serialize with other work in the process
        // (another replica's, LibTorch's own).
        stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())) {}

  void EnterThread() override {
    c10::cuda::set_device(device_.index());
    c10::cuda::setCurrentCUDAStream(stream_);
  }

  at::Tensor HostTensor(at::IntArrayRef sizes, at::ScalarType dtype) override {
    return at::empty(sizes, at::TensorOptions().dtype(dtype).pinned_memory(true));
  }

  at::Tensor ToDevice(const at::Tensor& host) override {
    return host.to(device_, /*non_blocking=*/true);
  }

  std::optional<DeviceMemoryUse> Memory() const override {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_.index());
    constexpr size_t kAggregate = 0;  // StatType::AGGREGATE: all pools.
    return DeviceMemoryUse{stats.allocated_bytes[kAggregate].current, stats.reserved_bytes[kAggregate].current};
  }

 private:
  const c10::Device device_;
  const c10::cuda::CUDAStream stream_;
};

}  // namespace

std::unique_ptr<DeviceRuntime> MakeCudaRuntime(const c10::Device& device) {
  return std::make_unique<CudaRuntime>(device);
}

}  // namespace deberta::model
