// DeviceRuntime: what the engine does differently on a CUDA device, behind
// one interface, so that only model/torch/cuda_runtime.cc (compiled when
// LibTorch has CUDA) includes CUDA headers: the engine's own stream, inputs
// staged in pinned host memory and copied without blocking, and the
// caching allocator's statistics, and device graphs.
#ifndef DEBERTA_MODEL_TORCH_DEVICE_RUNTIME_H_
#define DEBERTA_MODEL_TORCH_DEVICE_RUNTIME_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "model/engine.h"

namespace deberta::model {

// Work recorded once and replayed on the same buffers: the tensors the
// recorded work read and wrote stay where they were, so inputs are copied
// into the recorded input tensors before a replay and results read from
// the recorded outputs after it (until the next replay overwrites them).
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  virtual void Replay() = 0;
};

// One per engine. EnterThread is called on the engine's executor thread;
// the rest on that thread afterwards (not thread-safe), but Memory, which
// any thread may call.
class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // Makes this engine's device and stream current on the calling thread
  // (both are per-thread settings in LibTorch).
  virtual void EnterThread() = 0;
  // An uninitialised host tensor to assemble a batch's inputs in: pinned
  // (page-locked) memory on CUDA, so that the copy to the device can run
  // asynchronously; ordinary memory on the CPU.
  virtual at::Tensor HostTensor(at::IntArrayRef sizes, at::ScalarType dtype) = 0;
  // `host` on the device: on CUDA an asynchronous copy on the engine's
  // stream (later kernels on that stream wait for it; LibTorch's pinned
  // allocator keeps the buffer alive until it is done); on the CPU `host`.
  virtual at::Tensor ToDevice(const at::Tensor& host) = 0;
  // The device allocator's bytes in use and held; nullopt on the CPU.
  virtual std::optional<DeviceMemoryUse> Memory() const = 0;
  // Records `work` (which must do device work only: no host copies, no
  // synchronisation) as a graph. On CUDA a CUDA graph captured on the
  // engine's stream, with memory from a pool that the engine's graphs
  // share (they replay one at a time on that stream): a replay launches
  // every kernel in one call. `work` does not compute during the capture;
  // run it once before (kernels chosen, libraries initialised). On the CPU
  // a replay runs `work` again on the same tensors: no saving, but the
  // engine's static-buffer path then runs, and is tested, without a GPU.
  // Throws as LibTorch does for a failed capture.
  virtual std::unique_ptr<DeviceGraph> Capture(std::function<void()> work) = 0;
};

// The runtime for `device`. On a CUDA device, FailedPrecondition when this
// build has no CUDA runtime (cuda_runtime.cc not compiled in).
absl::StatusOr<std::unique_ptr<DeviceRuntime>> MakeDeviceRuntime(const c10::Device& device);

// Implementation detail: defined in cuda_runtime.cc, only in CUDA builds.
std::unique_ptr<DeviceRuntime> MakeCudaRuntime(const c10::Device& device);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_DEVICE_RUNTIME_H_
