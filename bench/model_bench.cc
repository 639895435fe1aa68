// Model speed: random-weight models of deberta-base (v1) and
// deberta-v3-base size, classification forward, by default at 1x128, 8x128
// and 32x64 tokens, in float32 and bfloat16 (and int8 on asking), on the CPU. Reports tokens/s
// and the model's linear-layer GFLOP/s as a fraction of a plain GEMM's
// GFLOP/s measured in the same process (same threads, same dtype), plus
// minor page faults per forward (glibc returning freed tensors to the OS
// shows up here).
//
//   build/bench/model_bench --threads=2 [--default_malloc] [--cpu_kernels=auto|portable|unpacked|libtorch] [--benchmark_filter=...]
//       [--device=cpu|cuda:N] [--dtypes=fp32,bf16,fp16,int8] [--configs=v1,v3]
//       [--shapes=1x128,8x128,32x64] [--min_time=2] [--graphs=off|on|off,on]
//
// --cpu_kernels forces a mode of the CPU backend (model/torch/cpu_backend.h):
// unpacked runs the float32/bfloat16 linear layers on plain weights
// (oneDNN's sgemm, LibTorch's bf16 linear), as before PackedLinear;
// libtorch runs LibTorch's ops only.
// --graphs=on runs each shape as the engine runs a bucket with
// --cuda_graphs: the embeddings and encoder recorded once (BucketGraph) and
// replayed, the classifier head eager after it. Every forward runs on the
// engine's own stream (DeviceRuntime), eager or not. On the CPU a "graph"
// reruns its work (no saving): measure it on a GPU.
//
// On a CUDA device each timed forward ends with its logits copied to the
// host, as the engine does, so the time covers the kernels. int8 is the
// engine's --dtype=int8 (the encoder's linear layers quantized, the other
// products in Int8ComputeDType()), named here by at::kChar; its GEMM calibration is the same
// product through Int8Linear.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <c10/core/InferenceMode.h>
#include <sys/resource.h>

#include <chrono>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/random_network.h"
#include "model/torch/bucket_graph.h"
#include "model/torch/deberta_model.h"
#include "model/torch/device_runtime.h"
#include "model/runtime.h"
#include "model/torch/cpu_backend.h"
#include "model/torch/int8_linear.h"
#include "model/torch/layers.h"

namespace deberta::model {
namespace {

int g_threads = 2;
bool g_default_malloc = false;  // --default_malloc: skip the mallopt tuning.
c10::Device g_device(c10::kCPU);
std::vector<at::ScalarType> g_dtypes = {at::kFloat, at::kBFloat16};
std::vector<std::string> g_configs = {"v1", "v3"};
std::vector<std::pair<int64_t, int64_t>> g_shapes = {{1, 128}, {8, 128}, {32, 64}};
double g_min_time = 2.0;
std::vector<bool> g_graphs = {false};  // --graphs: eager, recorded, or both.
std::unique_ptr<DeviceRuntime> g_runtime;  // The engine's runtime for g_device; made in main.

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// GFLOP/s of one [tokens, H] x [H, I] GEMM (the FFN shape) in `dtype` on
// the device (in rounds of 10 that end by reading one value back).
double GemmGflops(int64_t tokens, int64_t in, int64_t out, at::ScalarType dtype) {
  c10::InferenceMode guard;
  const bool int8 = dtype == at::kChar;
  // As the engine computes on this device (bfloat16 may run as float32).
  const at::ScalarType data = int8 ? at::kFloat : g_device.is_cpu() ? CpuComputeDType(dtype) : dtype;
  at::Tensor x = at::randn({tokens, in}).to(g_device, data), w = at::randn({out, in}).to(g_device, data);
  const Int8Linear int8_linear = int8 ? Int8Linear::Pack(w, at::Tensor()) : Int8Linear();
  auto product = [&] { return int8 ? int8_linear.forward(x) : LinearInDType(x, w, at::Tensor()); };
  for (int i = 0; i < 3; ++i) product()[0][0].item<float>();
  int iterations = 0;
  auto start = std::chrono::steady_clock::now();
  double seconds = 0;
  while (seconds < 0.5) {
    at::Tensor y;
    for (int i = 0; i < 10; ++i) y = product();
    y[0][0].item<float>();
    iterations += 10;
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return 2.0 * tokens * in * out * iterations / seconds / 1e9;
}

struct Prepared {
  DebertaConfig config;
  DebertaNetwork network{nullptr};
};

Prepared& Network(const std::string& which, at::ScalarType dtype) {
  static std::map<std::string, Prepared> cache;
  const std::string key = absl::StrCat(which, "/", c10::toString(dtype));
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  cache.clear();  // One model in memory at a time.
  Prepared p;
  p.config = BaseConfig(which);
  p.network = RandomNetwork(p.config, NetworkParts{/*classifier=*/true, /*mlm_head=*/false,
                                                   /*position_table=*/false});
  p.network->to(g_device);
  if (dtype == at::kChar) {
    p.network->Prepare(Int8ComputeDType(), /*int8_encoder=*/true);
  } else {
    p.network->Prepare(g_device.is_cpu() ? CpuComputeDType(dtype) : dtype);  // As LoadNetwork does.
  }
  return cache.emplace(key, std::move(p)).first->second;
}

// Linear-layer FLOPs of one forward: per layer QKV (3AH), attention output
// (AH), FFN (2HI); two per multiply-add. Eager classification runs the last
// layer's keys and values for every token and the rest for the first
// position of each sequence alone (LastLayerPositions::kFirstOnly); a
// recorded graph runs every layer whole.
double LinearFlops(const DebertaConfig& c, int64_t batch, int64_t length, bool graph) {
  const double h = c.hidden_size, a = c.AllHeadSize(), i = c.intermediate_size;
  const double tokens = static_cast<double>(batch * length), layer = 4 * a * h + 2 * h * i;
  if (graph) return 2.0 * tokens * c.num_hidden_layers * layer;
  const double last = tokens * 2 * a * h + batch * (layer - 2 * a * h);
  return 2.0 * (tokens * (c.num_hidden_layers - 1) * layer + last);
}

void BM_Classify(benchmark::State& state, const std::string& which, at::ScalarType dtype, bool graph) {
  const int64_t batch = state.range(0), length = state.range(1), tokens = batch * length;
  at::set_num_threads(g_threads);
  g_runtime->EnterThread();
  Prepared& p = Network(which, dtype);
  const double gemm = GemmGflops(tokens, p.config.hidden_size, p.config.intermediate_size, dtype);
  c10::InferenceMode guard;
  NetworkInputs inputs{at::randint(5, 1000, {batch, length}, at::kLong).to(g_device), at::Tensor(),
                       at::ones({batch, length}).to(g_device)};
  std::vector<int64_t> rows;
  std::unique_ptr<BucketGraph> recorded = graph ? BucketGraph::Record(*p.network, *g_runtime, {batch, length}) : nullptr;
  // No rows_wanted: nothing can stop these forwards (value() would throw).
  auto forward = [&] {
    if (recorded) return p.network->ClassifierLogits(recorded->Run(inputs, batch).value()).to(at::kCPU);
    return p.network->ClassifierLogits(inputs, &rows).value().to(at::kCPU);
  };
  for (int i = 0; i < 2; ++i) forward();  // Warm-up.
  const long faults_before = MinorFaults();
  for (auto _ : state) benchmark::DoNotOptimize(forward());
  const double forwards = static_cast<double>(state.iterations());
  state.counters["tokens_per_s"] = benchmark::Counter(tokens * forwards, benchmark::Counter::kIsRate);
  state.counters["linear_gflops"] =
      benchmark::Counter(LinearFlops(p.config, batch, length, graph) * forwards / 1e9, benchmark::Counter::kIsRate);
  state.counters["gemm_gflops"] = gemm;
  state.counters["faults_per_forward"] = (MinorFaults() - faults_before) / forwards;
}

// linear_gflops / gemm_gflops, printed after the run for readability.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> copy = runs;
    for (Run& run : copy) {
      auto l = run.counters.find("linear_gflops"), g = run.counters.find("gemm_gflops");
      if (l != run.counters.end() && g != run.counters.end() && g->second.value > 0) {
        // Rates are per second of CPU time unless converted; use real time.
        double linear = l->second.value;
        run.counters["of_gemm"] = linear / g->second.value;
      }
    }
    ConsoleReporter::ReportRuns(copy);
  }
};

const char* DTypeName(at::ScalarType dtype) {
  return dtype == at::kFloat ? "fp32" : dtype == at::kBFloat16 ? "bf16" : dtype == at::kChar ? "int8" : "fp16";
}

void RegisterAll() {
  for (const std::string& which : g_configs) {
    for (at::ScalarType dtype : g_dtypes) {
      for (bool graph : g_graphs) {
        auto* b = benchmark::RegisterBenchmark(
            absl::StrCat("Classify/deberta_base_", which, "/", DTypeName(dtype), graph ? "/graph" : "").c_str(),
            [which, dtype, graph](benchmark::State& s) { BM_Classify(s, which, dtype, graph); });
        for (const auto& [batch, length] : g_shapes) b->Args({batch, length});
        b->ArgNames({"batch", "len"});
        b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(g_min_time);
      }
    }
  }
}

// Our flags (--name=value); false for a bad value. Google Benchmark parses
// its own (--benchmark_*) afterwards.
// Whether int8 can run: oneDNN selected as LibTorch's quantized engine
// (as ConfigureRuntime does, which --default_malloc skips).
bool Int8Ready() {
  SelectOnednnQuantizedEngine();
  return RequireOnednnQuantizedEngine().ok();
}

bool ParseFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (name == "--threads") {
      if (!absl::SimpleAtoi(value, &g_threads) || g_threads < 1) return false;
    } else if (name == "--default_malloc") {
      g_default_malloc = true;
    } else if (name == "--cpu_kernels") {
      if (!ForceCpuKernelMode(value)) return false;
    } else if (name == "--device") {
      g_device = c10::Device(value);  // Throws for a malformed name.
    } else if (name == "--min_time") {
      if (!absl::SimpleAtod(value, &g_min_time) || g_min_time <= 0) return false;
    } else if (name == "--dtypes") {
      g_dtypes.clear();
      for (absl::string_view d : absl::StrSplit(value, ',')) {
        if (d == "fp32") g_dtypes.push_back(at::kFloat);
        else if (d == "bf16") g_dtypes.push_back(at::kBFloat16);
        else if (d == "fp16") g_dtypes.push_back(at::kHalf);
        else if (d == "int8" && g_device.is_cpu() && Int8Ready()) g_dtypes.push_back(at::kChar);
        else return false;
      }
    } else if (name == "--configs") {
      g_configs.clear();
      for (absl::string_view c : absl::StrSplit(value, ',')) {
        if (c != "v1" && c != "v3") return false;
        g_configs.emplace_back(c);
      }
    } else if (name == "--graphs") {
      g_graphs.clear();
      for (absl::string_view g : absl::StrSplit(value, ',')) {
        if (g != "on" && g != "off") return false;
        g_graphs.push_back(g == "on");
      }
    } else if (name == "--shapes") {
      g_shapes.clear();
      for (absl::string_view shape : absl::StrSplit(value, ',')) {
        std::vector<absl::string_view> parts = absl::StrSplit(shape, 'x');
        int64_t batch = 0, length = 0;
        if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &batch) || !absl::SimpleAtoi(parts[1], &length) ||
            batch < 1 || length < 2) {
          return false;
        }
        g_shapes.emplace_back(batch, length);
      }
    }
  }
  return true;
}

}  // namespace
}  // namespace deberta::model

int main(int argc, char** argv) {
  if (!deberta::model::ParseFlags(argc, argv)) {
    std::cerr << "model_bench: bad flag (--threads=N --device=cpu|cuda:N --dtypes=fp32,bf16,fp16,int8 "
                 "(int8: cpu only, after --device) --configs=v1,v3 --shapes=BxL,... --min_time=S --graphs=off,on)\n";
    return 2;
  }
  auto runtime = deberta::model::MakeDeviceRuntime(deberta::model::g_device);
  if (!runtime.ok()) {
    std::cerr << "model_bench: " << runtime.status() << "\n";
    return 2;
  }
  deberta::model::g_runtime = *std::move(runtime);
  if (deberta::model::g_default_malloc) {
    at::set_num_threads(deberta::model::g_threads);
  } else {
    deberta::model::ConfigureRuntime({deberta::model::g_threads});
  }
  at::globalContext().setFlushDenormal(true);
  // float32 on CUDA as the engine runs it by default: no TF32.
  at::globalContext().setAllowTF32CuBLAS(false);
  at::globalContext().setAllowTF32CuDNN(false);
  deberta::model::RegisterAll();
  benchmark::Initialize(&argc, argv);
  deberta::model::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  return 0;
}
