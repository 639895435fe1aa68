// Process-wide runtime settings of LibTorch, made explicit: a program that
// loads the model calls ConfigureRuntime once from main, before creating an
// engine. Declared torch-free; defined in the model_torch library.
#ifndef DEBERTA_MODEL_RUNTIME_H_
#define DEBERTA_MODEL_RUNTIME_H_

namespace deberta::model {

// LibTorch's process-wide settings: one set per process, whatever the
// number of engines (replicas, models) it creates.
struct RuntimeOptions {
  // Intra-op threads of the calling thread: ResolveThreadCount(num_threads).
  // A server passes 1: it loads the model on the main thread, and batches
  // run on the batcher's threads, which the engine's InitializeThread sets up.
  int num_threads = 1;
  // float32 matrix products and convolutions on a GPU in TF32 (Ampere and
  // later): faster, but about 3 significant digits instead of 7, so off by
  // default, which keeps float32 on a GPU within the golden tolerance.
  bool allow_tf32 = false;
};

// Probes the CPU for the kernels to run (model/torch/cpu_backend.h), keeps
// freed tensor memory inside the process (glibc's mallopt: see the
// implementation for the page faults it saves), sets the calling thread's
// intra-op threads, TF32 on or off, and selects oneDNN as LibTorch's
// quantized engine where this LibTorch has it (int8 needs it: LoadNetwork
// refuses int8 otherwise).
void ConfigureRuntime(const RuntimeOptions& options);

// Gives the heap's free memory back to the system (glibc's malloc_trim),
// which ConfigureRuntime's settings otherwise keep: once a phase that frees
// much more than serving reuses is over (loading, the kernel warm-up).
void ReleaseFreeMemory();

// `num_threads` when > 0; otherwise the CPUs this process may run on,
// within its cgroup v2 CPU quota (a container with a 2-CPU limit on a
// 64-core node gets 2).
int ResolveThreadCount(int num_threads);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_RUNTIME_H_
