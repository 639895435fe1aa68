// Engine flags -> EngineOptions.
#include "model/engine_flags.h"

#include <algorithm>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "model/replica_options.h"

namespace {

// Each flag's default is its options struct's.
const deberta::model::EngineOptions& EngineDefaults() {
  static const auto* defaults = new deberta::model::EngineOptions();
  return *defaults;
}
const deberta::model::RuntimeOptions& RuntimeDefaults() {
  static const auto* defaults = new deberta::model::RuntimeOptions();
  return *defaults;
}

}  // namespace

ABSL_FLAG(std::string, model, EngineDefaults().model,
          "Checkpoint folder (config.json + model.safetensors) or 'demo'");
ABSL_FLAG(std::string, device, EngineDefaults().device,
          "cpu or cuda:N; for several replicas a list, spread round-robin (cuda:0,cuda:1)");
ABSL_FLAG(std::string, dtype, deberta::model::ComputeDTypeName(EngineDefaults().dtype),
          "float32, bfloat16 (CPU with avx512_bf16, GPU), float16 (GPU) or int8 (CPU: the encoder's "
          "linear layers in int8, the rest float32)");
ABSL_FLAG(int, threads, EngineDefaults().num_threads,
          "CPU threads for the model (0 = the CPUs this process may use, within its cgroup CPU limit)");
ABSL_FLAG(std::string, emd, deberta::model::EmdModeName(EngineDefaults().emd),
          "Fill-mask decoder: auto, emd (Enhanced Mask Decoder) or plain");
ABSL_FLAG(int64_t, max_sequence_length, EngineDefaults().max_sequence_length,
          "Longest sequence in tokens (0 = the model's limit)");
ABSL_FLAG(int, replicas, 1,
          "Engine replicas behind the one batcher, each running its own batches (the CPU ones share --threads)");
ABSL_FLAG(bool, allow_tf32, RuntimeDefaults().allow_tf32,
          "GPU float32 matrix products in TF32 (faster, ~3 significant digits; off keeps float32 exact)");
ABSL_FLAG(std::string, warmup_shapes, "auto",
          "Batches run once per head before serving (a shape's first batch is slower than later ones): auto "
          "(the largest batch the batcher can form: --max_batch_tokens of the longest sequences), none, or "
          "shapes SEQUENCESxTOKENS,... (with auto: auto,16x128)");
ABSL_FLAG(bool, warmup_kernels, true,
          "On the CPU, make oneDNN's kernels for the batch shapes whose first batch would wait longest for them "
          "(rows up to 1024; in bfloat16 and int8 also lengths up to 128) before serving (deberta-v3-base: 0.3 s "
          "and 75 MiB in float32, 1.2-1.6 s and 200-250 MiB in bfloat16 or int8)");

ABSL_FLAG(std::string, buckets, "",
          "Fixed batch shapes SEQUENCESxTOKENS,...: a batch is padded up to the smallest that holds it (answers "
          "unchanged), each is warmed up; needed by --cuda_graphs. Empty: batches run at their own shape");
ABSL_FLAG(bool, cuda_graphs, false,
          "Record each --buckets shape's encoder as a CUDA graph at warm-up and replay it (one launch per "
          "batch); needs a CUDA --device. Off until measured on a GPU");

namespace deberta::model {

// More intra-op threads than this many per CPU only add contention.
constexpr int kMaxThreadsPerCpu = 4;

absl::StatusOr<EngineOptions> EngineOptionsFromFlags() {
  EngineOptions options;
  options.model = absl::GetFlag(FLAGS_model);
  options.device = absl::GetFlag(FLAGS_device);
  auto dtype = ParseComputeDType(absl::GetFlag(FLAGS_dtype));
  if (!dtype.ok()) return absl::InvalidArgumentError(absl::StrCat("--dtype: ", dtype.status().message()));
  options.dtype = *dtype;
  auto emd = ParseEmdMode(absl::GetFlag(FLAGS_emd));
  if (!emd.ok()) return absl::InvalidArgumentError(absl::StrCat("--emd: ", emd.status().message()));
  options.emd = *emd;
  const int threads = absl::GetFlag(FLAGS_threads);
  const int cpus = std::max(1u, std::thread::hardware_concurrency());
  if (threads < 0 || threads > kMaxThreadsPerCpu * cpus) {
    return absl::InvalidArgumentError(absl::StrCat("--threads is ", threads, "; it must be in [0, ",
                                                   kMaxThreadsPerCpu * cpus, "] (0: one per CPU; this machine has ",
                                                   cpus, ")"));
  }
  options.num_threads = threads;
  options.max_sequence_length = absl::GetFlag(FLAGS_max_sequence_length);
  auto buckets = ParseShapes(absl::GetFlag(FLAGS_buckets));
  if (!buckets.ok()) return absl::InvalidArgumentError(absl::StrCat("--buckets: ", buckets.status().message()));
  options.buckets = *buckets;
  options.device_graphs = absl::GetFlag(FLAGS_cuda_graphs);
  options.warmup_kernels = absl::GetFlag(FLAGS_warmup_kernels);
  if (options.device_graphs && !absl::StartsWith(options.device, "cuda")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cuda_graphs needs a CUDA --device (cuda:N); --device is ", options.device));
  }
  if (options.max_sequence_length < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--max_sequence_length is ", options.max_sequence_length,
                                                   "; it must be >= 0 (0: the model's limit)"));
  }
  return options;
}

RuntimeOptions RuntimeOptionsFromFlags(int num_threads) {
  RuntimeOptions options;
  options.num_threads = num_threads;
  options.allow_tf32 = absl::GetFlag(FLAGS_allow_tf32);
  return options;
}

absl::Status SetWarmupFromFlag(int64_t max_batch_size, int64_t max_batch_tokens, EngineOptions& options) {
  std::string text = absl::GetFlag(FLAGS_warmup_shapes);
  options.warmup_shapes.clear();
  options.warmup_batch_tokens = 0;
  if (text == "none") return absl::OkStatus();
  if (text == "auto" || absl::StartsWith(text, "auto,")) {
    options.warmup_batch_tokens = max_batch_tokens;
    options.warmup_max_batch_size = max_batch_size;
    text = text.size() > 4 ? text.substr(5) : "";
  }
  auto shapes = ParseShapes(text);
  if (!shapes.ok()) return absl::InvalidArgumentError(absl::StrCat("--warmup_shapes: ", shapes.status().message()));
  options.warmup_shapes = *shapes;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<EngineOptions>> ReplicaOptionsFromFlags(const EngineOptions& options, int cpu_threads) {
  return ReplicaOptions(options, absl::GetFlag(FLAGS_replicas), cpu_threads);
}

}  // namespace deberta::model
