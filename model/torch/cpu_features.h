// What the CPU we run on can do, for the few kernels written with x86
// intrinsics: the project builds for baseline x86-64, so those kernels are
// compiled for AVX2 + FMA by attribute and chosen at run time, each next
// to a portable version that runs elsewhere (and in the tests, on demand).
#ifndef DEBERTA_MODEL_TORCH_CPU_FEATURES_H_
#define DEBERTA_MODEL_TORCH_CPU_FEATURES_H_

#include <atomic>

#if defined(__x86_64__)
#include <immintrin.h>

// On a function whose body uses AVX2 or FMA intrinsics.
#define DEBERTA_TARGET_AVX2 __attribute__((target("avx2,fma")))
#endif

namespace deberta::model {

// Whether the AVX2 kernels may run where the CPU has AVX2 (default: yes).
// Tests switch them off to check the portable kernels on the same cases.
inline std::atomic<bool>& Avx2KernelsAllowed() {
  static std::atomic<bool> allowed{true};
  return allowed;
}

// Switches the AVX2 kernels off for its lifetime (tests of the portable
// kernels); not for concurrent use.
class ScopedPortableKernels {
 public:
  ScopedPortableKernels() { Avx2KernelsAllowed().store(false); }
  ~ScopedPortableKernels() { Avx2KernelsAllowed().store(true); }
  ScopedPortableKernels(const ScopedPortableKernels&) = delete;
  ScopedPortableKernels& operator=(const ScopedPortableKernels&) = delete;
};

inline bool UseAvx2Kernels() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has && Avx2KernelsAllowed().load(std::memory_order_relaxed);
#else
  return false;
#endif
}

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_CPU_FEATURES_H_
