// The devices and CPU threads of each engine replica.
#include "model/replica_options.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace deberta::model {

absl::StatusOr<std::vector<EngineOptions>> ReplicaOptions(const EngineOptions& base, int replicas,
                                                          int cpu_threads) {
  if (replicas < 1 || replicas > kMaxReplicas) {
    return absl::InvalidArgumentError(
        absl::StrCat("--replicas is ", replicas, "; it must be in [1, ", kMaxReplicas, "]"));
  }
  std::vector<std::string> devices;
  for (absl::string_view device : absl::StrSplit(base.device, ',')) {
    device = absl::StripAsciiWhitespace(device);
    if (device.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--device is \"", base.device, "\"; a device list has no empty entries"));
    }
    devices.emplace_back(device);
  }
  std::vector<EngineOptions> options(replicas, base);
  int cpu_replicas = 0;
  for (int r = 0; r < replicas; ++r) {
    options[r].device = devices[r % devices.size()];
    if (!absl::StartsWith(options[r].device, "cuda")) ++cpu_replicas;
  }
  if (cpu_replicas == 0) return options;
  if (cpu_threads < cpu_replicas) {
    return absl::InvalidArgumentError(absl::StrCat(cpu_replicas, " replicas on the CPU need at least as many threads; ",
                                                   "they would share ", cpu_threads,
                                                   " (raise --threads or lower --replicas)"));
  }
  int cpu_index = 0;
  for (EngineOptions& replica : options) {
    if (absl::StartsWith(replica.device, "cuda")) continue;
    replica.num_threads = cpu_threads / cpu_replicas + (cpu_index < cpu_threads % cpu_replicas ? 1 : 0);
    ++cpu_index;
  }
  return options;
}

}  // namespace deberta::model
