// DeviceRuntime on a CUDA device: stream, pinned inputs, allocator
// statistics and CUDA graphs. Compiled only when LibTorch has CUDA
// (CMake: TORCH_CUDA_LIBRARIES), so the CPU build needs no CUDA headers.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <torch/version.h>

#include <memory>
#include <utility>

#include "model/torch/device_runtime.h"

namespace deberta::model {
namespace {

// A memory pool that graphs share. LibTorch counts a pool's graphs and
// releases it when the last one is destroyed; a capture into a released
// pool's id fails an internal assertion (seen with LibTorch 2.11 in
// model_bench, which records and drops a graph per shape). So each graph
// holds the pool it was captured in, and the runtime asks for a new one
// once no graph holds the last.
struct SharedPool {
  c10::cuda::MempoolId_t id;
};

class CudaGraph final : public DeviceGraph {
 public:
  explicit CudaGraph(std::shared_ptr<const SharedPool> pool) : pool(std::move(pool)) {}
  void Replay() override { graph.replay(); }
  const std::shared_ptr<const SharedPool> pool;  // Outlives `graph` (declared first).
  at::cuda::CUDAGraph graph;
};

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

  std::unique_ptr<DeviceGraph> Capture(std::function<void()> work) override {
    // One memory pool for all of this engine's graphs. PyTorch calls a
    // shared pool safe when graphs replay in the order captured; ours
    // replay in any order, which is safe too because each replay writes its
    // scratch memory before reading it and the engine reads a graph's
    // outputs only before the next replay (one stream, one thread): a block
    // that graph B kept as an output and graph A uses as scratch is
    // overwritten only while B's outputs are not needed.
    std::shared_ptr<const SharedPool> pool = pool_.lock();
    if (pool == nullptr) {
      pool = std::make_shared<SharedPool>(SharedPool{at::cuda::graph_pool_handle()});
      pool_ = pool;
    }
    auto graph = std::make_unique<CudaGraph>(pool);
    // Thread-local capture: other replicas' threads may allocate or
    // synchronise while this one captures.
#if TORCH_VERSION_MAJOR >= 2
    graph->graph.capture_begin(pool->id, cudaStreamCaptureModeThreadLocal);
#else
    graph->graph.capture_begin(pool->id);
#endif
    try {
      work();
    } catch (...) {
      // End the capture so the stream is usable again; its own error, if
      // any, matters less than the one that stopped the work.
      try {
        graph->graph.capture_end();
      } catch (...) {
      }
      throw;
    }
    graph->graph.capture_end();
    return graph;
  }

 private:
  const c10::Device device_;
  const c10::cuda::CUDAStream stream_;
  std::weak_ptr<const SharedPool> pool_;  // Shared by this engine's live graphs.
};

}  // namespace

std::unique_ptr<DeviceRuntime> MakeCudaRuntime(const c10::Device& device) {
  return std::make_unique<CudaRuntime>(device);
}

}  // namespace deberta::model
