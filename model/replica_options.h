// ReplicaOptions: the EngineOptions of each of N engine replicas of one
// model, spread over a list of devices and, on the CPU, over the threads.
// Torch-free.
#ifndef DEBERTA_MODEL_REPLICA_OPTIONS_H_
#define DEBERTA_MODEL_REPLICA_OPTIONS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "model/engine_options.h"

namespace deberta::model {

// Most replicas of one model in one server.
inline constexpr int kMaxReplicas = 64;

// One EngineOptions per replica, from `base`, whose `device` may be a
// comma-separated list ("cuda:0,cuda:1"): replica i runs on the
// (i mod list size)-th device, so 4 replicas over two GPUs put two on
// each. The CPU replicas share `cpu_threads` intra-op threads (the
// resolved --threads): each gets an equal share, the first ones one more
// when it does not divide, so together they use what one engine would;
// GPU replicas keep base.num_threads (their host-side threads).
// InvalidArgument: replicas outside [1, kMaxReplicas], an empty entry in
// the list, or fewer threads than CPU replicas.
absl::StatusOr<std::vector<EngineOptions>> ReplicaOptions(const EngineOptions& base, int replicas,
                                                          int cpu_threads);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_REPLICA_OPTIONS_H_
