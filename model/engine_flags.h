// The flags that choose and place the model (--model, --device, --dtype,
// --threads, --emd, --max_sequence_length, --replicas, --warmup_shapes,
// --warmup_kernels, --buckets, --cuda_graphs) and LibTorch's process-wide
// settings (--allow_tf32), shared by deberta-server and deberta-cli, and
// the functions that turn them into EngineOptions and RuntimeOptions. Each
// flag's default is its options struct's, but for the warm-up: the
// server's default warms up (seconds of start-up), an engine made in code
// (tests, tools) does not unless asked.
#ifndef DEBERTA_MODEL_ENGINE_FLAGS_H_
#define DEBERTA_MODEL_ENGINE_FLAGS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "model/engine_options.h"
#include "model/runtime.h"

namespace deberta::model {

// InvalidArgument naming the flag for an unknown dtype or EMD mode, a
// negative or absurd thread count, a negative sequence length, bad
// --buckets, or --cuda_graphs without buckets or off a CUDA device.
absl::StatusOr<EngineOptions> EngineOptionsFromFlags();

// --allow_tf32, with the calling thread's `num_threads`, for ConfigureRuntime.
RuntimeOptions RuntimeOptionsFromFlags(int num_threads);

// --warmup_shapes into `options`: "auto" (the default) warms the largest
// batch the batcher's limits allow (see EngineOptions::warmup_batch_tokens),
// "none" nothing but the first short sequence, else a shape list, which
// may follow "auto,". InvalidArgument naming the flag for a bad shape.
absl::Status SetWarmupFromFlag(int64_t max_batch_size, int64_t max_batch_tokens, EngineOptions& options);

// One EngineOptions per --replicas (deberta-server), from `options` (as
// EngineOptionsFromFlags made them, --device possibly a list) and the
// resolved thread count: see ReplicaOptions.
absl::StatusOr<std::vector<EngineOptions>> ReplicaOptionsFromFlags(const EngineOptions& options, int cpu_threads);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_ENGINE_FLAGS_H_
