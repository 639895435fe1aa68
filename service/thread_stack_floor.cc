// Raises tiny thread stack requests to a floor, for processes that load
// LibTorch and serve /metrics with prometheus-cpp.
//
// Why: prometheus-cpp's HTTP server (civetweb) asks for 100 KiB thread
// stacks. glibc carves the static TLS of every loaded library out of each
// thread's stack, and Debian's libtorch_cpu pulls in about 100 KiB of it
// (OpenBLAS 60 KiB, glog 30 KiB, torch 10 KiB), so pthread_create fails
// with EINVAL and civetweb reports "Cannot create first worker thread"
// (seen by prometheus-cpp as "null context when constructing CivetServer").
// Linked into the executable, this definition interposes on glibc's for
// every caller in the process; requests at or above the floor pass
// unchanged. Only executables that link both LibTorch and the exposer
// (deberta-server, the end-to-end tests) compile this file.
#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <cstddef>

namespace {
constexpr size_t kMinThreadStackBytes = size_t{1} << 20;  // 1 MiB: 10x the TLS seen.
}  // namespace

extern "C" int pthread_attr_setstacksize(pthread_attr_t* attr, size_t stack_bytes) {
  using SetStackSize = int (*)(pthread_attr_t*, size_t);
  static const SetStackSize glibc_set_stack_size =
      reinterpret_cast<SetStackSize>(dlsym(RTLD_NEXT, "pthread_attr_setstacksize"));
  return glibc_set_stack_size(attr, std::max(stack_bytes, kMinThreadStackBytes));
}
