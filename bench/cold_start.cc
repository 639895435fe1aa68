// Cold start (issue 12, item 4): the first classify batch of each shape
// against the same batch once warm, through the engine as the server runs
// it (InitializeThread first, as the batcher's executor does).
//
//   build/bench/cold_start --model=DIR [--dtype=float32] [--threads=2]
//       [--shapes=16x128,8x64,1x128,32x32] [--warm_kernels] [--warm_shapes=...]
//       [--warm_batch_tokens=N]
//
// With --warm_kernels the engine makes every shape's kernels first
// (EngineOptions::warmup_kernels, as the server's default warm-up does).
// With --warm_shapes the engine is created with those warm-up shapes
// (EngineOptions::warmup_shapes), with --warm_batch_tokens with the server's
// automatic largest batch of N padded tokens (at most 32 sequences), so
// that the figure shows what warming them buys. Prints, per shape: first call, the median of the next five,
// and their ratio.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "model/engine_factory.h"
#include "model/engine_options.h"
#include "model/runtime.h"
#include "model/torch/torch_engine.h"

namespace deberta::model {
namespace {

// This process's resident memory now, MiB (VmRSS), or -1.
double ResidentMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return -1;
}

double MillisecondsOf(Engine& engine, const std::vector<Sequence>& batch) {
  const auto start = std::chrono::steady_clock::now();
  auto out = engine.Classify(batch);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!out.ok()) {
    std::cerr << "cold_start: " << out.status() << "\n";
    std::exit(1);
  }
  return ms;
}

int Run(int argc, char** argv) {
  EngineOptions options;
  options.num_threads = 2;
  std::string shapes_text = "16x128,8x64,1x128,32x32";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    bool ok = true;
    if (name == "--model") {
      options.model = value;
    } else if (name == "--threads") {
      ok = absl::SimpleAtoi(value, &options.num_threads) && options.num_threads >= 1;
    } else if (name == "--dtype") {
      auto dtype = ParseComputeDType(value);
      ok = dtype.ok();
      if (ok) options.dtype = *dtype;
    } else if (name == "--shapes") {
      shapes_text = value;
    } else if (name == "--warm_batch_tokens") {
      ok = absl::SimpleAtoi(value, &options.warmup_batch_tokens) && options.warmup_batch_tokens >= 0;
      options.warmup_max_batch_size = 32;
    } else if (name == "--warm_kernels") {
      options.warmup_kernels = value.empty() || value == "true";
      ok = value.empty() || value == "true" || value == "false";
    } else if (name == "--warm_shapes") {
      auto shapes = ParseShapes(value);
      ok = shapes.ok();
      if (ok) options.warmup_shapes = *shapes;
    } else {
      ok = false;
    }
    if (!ok) {
      std::cerr << "cold_start: bad flag '" << arg << "'\n";
      return 2;
    }
  }
  auto shapes = ParseShapes(shapes_text);
  if (!shapes.ok()) {
    std::cerr << "cold_start: --shapes: " << shapes.status() << "\n";
    return 2;
  }
  ConfigureRuntime(RuntimeOptions{});  // As deberta-server: one thread here, the engine's thread gets the rest.
  auto engine = CreateTorchEngine(options);
  if (!engine.ok()) {
    std::cerr << "cold_start: " << engine.status() << "\n";
    return 1;
  }
  const double resident_before = ResidentMiB();
  const auto init_start = std::chrono::steady_clock::now();
  if (absl::Status s = (*engine)->InitializeThread(); !s.ok()) {
    std::cerr << "cold_start: " << s << "\n";
    return 1;
  }
  const double init_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - init_start).count();
  std::printf("%s, %s, %d threads, warm-up kernels %s, shapes after 1x8: [%s] (InitializeThread %.0f ms, "
              "resident %.0f MiB before it, %.0f after)\n",
              options.model.c_str(), ComputeDTypeName(options.dtype), options.num_threads,
              options.warmup_kernels ? "on" : "off",
              FormatShapes(TorchEngine::WarmupShapes(options, (*engine)->info().max_sequence_length)).c_str(), init_ms,
              resident_before, ResidentMiB());
  std::printf("| shape | first call, ms | warm (median of 5), ms | first / warm |\n|---|---|---|---|\n");
  int32_t token = 5;
  for (const BatchShape& shape : *shapes) {
    auto batch = [&] {  // Fresh ids each call: no caching can matter.
      std::vector<Sequence> b(shape.batch_size);
      for (Sequence& s : b) {
        s.token_ids.resize(shape.length);
        for (int32_t& id : s.token_ids) id = 5 + (token++ % 900);
      }
      return b;
    };
    const double first = MillisecondsOf(**engine, batch());
    std::vector<double> warm;
    for (int i = 0; i < 5; ++i) warm.push_back(MillisecondsOf(**engine, batch()));
    std::nth_element(warm.begin(), warm.begin() + 2, warm.end());
    std::printf("| %lldx%lld | %.1f | %.1f | %.2f |\n", static_cast<long long>(shape.batch_size),
                static_cast<long long>(shape.length), first, warm[2], first / warm[2]);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace deberta::model

int main(int argc, char** argv) { return deberta::model::Run(argc, argv); }
