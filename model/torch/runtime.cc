// Process-wide runtime settings: thread count, CPU probe, allocator, TF32
// and the quantized engine.
#include "model/runtime.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <malloc.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "model/torch/cpu_backend.h"
#include "model/torch/int8_linear.h"

#ifdef DEBERTA_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace deberta::model {
namespace {

// Enough for the kernel warm-up of a few models (see ConfigureRuntime).
constexpr int kPrimitiveCacheCapacity = 16384;

}  // namespace

int ResolveThreadCount(int num_threads) {
  if (num_threads > 0) return num_threads;
  // The CPUs this process may run on, further limited by a cgroup v2 CPU
  // quota ("cpu.max": "<quota> <period>" or "max <period>"), so that a
  // container with a 2-CPU limit on a 64-core node uses 2 threads.
  cpu_set_t allowed;
  int cpus = sched_getaffinity(0, sizeof(allowed), &allowed) == 0
                 ? CPU_COUNT(&allowed)
                 : static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  std::ifstream cpu_max("/sys/fs/cgroup/cpu.max");
  std::string quota_text;
  int64_t quota = 0, period = 0;
  if (cpu_max >> quota_text >> period && absl::SimpleAtoi(quota_text, &quota) && quota > 0 &&
      period > 0) {
    const int64_t limit = (quota + period - 1) / period;
    cpus = static_cast<int>(std::min<int64_t>(cpus, std::max<int64_t>(1, limit)));
  }
  return std::max(1, cpus);
}

void ReleaseFreeMemory() { malloc_trim(0); }

void ConfigureRuntime(const RuntimeOptions& options) {
  at::set_num_threads(ResolveThreadCount(options.num_threads));
  // The CPU backend's probe, once, at start rather than in the first load.
  ProbeCpu();
  // glibc returns large freed blocks (tensors) to the OS after every
  // forward, so the next forward page-faults them back in: up to 2 million
  // faults per deberta-base forward. Serve every block from the heap (up to
  // the 32 MiB cap glibc allows for mmap's threshold) and never trim it.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
  // They matter on CUDA devices only.
  at::globalContext().setAllowTF32CuBLAS(options.allow_tf32);
  at::globalContext().setAllowTF32CuDNN(options.allow_tf32);
  // Without it int8 is refused at load (RequireOnednnQuantizedEngine), with its reason.
  SelectOnednnQuantizedEngine();
#ifdef DEBERTA_WITH_ONEDNN
  // The kernel warm-up (EngineOptions::warmup_kernels) makes about 4,600
  // primitives for a deberta-v3-base in bfloat16 or int8 (the linear
  // products' row grid, four attention products and LibTorch's
  // first-position ones per length); oneDNN's cache keeps 1,024 by
  // default, so the warm-up would evict its own work. Unless the
  // environment sets a capacity (ONEDNN_PRIMITIVE_CACHE_CAPACITY).
  if (std::getenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY") == nullptr &&
      std::getenv("DNNL_PRIMITIVE_CACHE_CAPACITY") == nullptr) {
    dnnl::set_primitive_cache_capacity(std::max(dnnl::get_primitive_cache_capacity(), kPrimitiveCacheCapacity));
  }
#endif
}

}  // namespace deberta::model
