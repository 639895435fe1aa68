// Process-wide runtime settings of LibTorch, made explicit: a program that
// loads the model calls ConfigureRuntime once from main, before creating an
// engine. Declared torch-free; defined in the model_torch library.
#ifndef DEBERTA_MODEL_RUNTIME_H_
#define DEBERTA_MODEL_RUNTIME_H_

namespace deberta::model {

// Probes the CPU for the kernels to run (model/torch/cpu_backend.h), keeps
// freed tensor memory inside the process (glibc's mallopt: see the
// implementation for the page faults it saves), and sets the calling
// thread's intra-op thread count to ResolveThreadCount(num_threads).
// A server passes 1: it loads the model on the main thread, and batches run
// on the batcher's thread, which the engine's InitializeThread sets up.
void ConfigureRuntime(int num_threads);

// `num_threads` when > 0; otherwise the CPUs this process may run on,
// within its cgroup v2 CPU quota (a container with a 2-CPU limit on a
// 64-core node gets 2).
int ResolveThreadCount(int num_threads);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_RUNTIME_H_
