// Where a forward's time goes, per operator (issue 12, item 3): the
// classification forward of a random deberta-base-size network, timed with
// LibTorch's RecordFunction callbacks on the calling thread. Each operator
// is charged its own (exclusive) time: its wall time less that of the
// operators it calls. Our oneDNN products record themselves
// ("deberta::sgemm_linear", "deberta::sgemm_product"), so every product is
// named; "(not in any operator)" is the forward's time outside them all.
//
//   build/bench/op_profile --threads=2 [--config=v1|v3] [--dtype=fp32|bf16|int8]
//       [--shape=1x128] [--forwards=10] [--cpu_kernels=auto|portable|unpacked|libtorch]
//
// --cpu_kernels: a mode of the CPU backend (model/torch/cpu_backend.h), e.g.
// unpacked (linear layers without PackedLinear) or libtorch (LibTorch's ops).
//
// The callbacks cost a little per operator; the table's total is the
// profiled forward's wall time, not a speed figure (model_bench has those).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/random_network.h"
#include "model/runtime.h"
#include "model/torch/deberta_model.h"
#include "model/torch/cpu_backend.h"
#include "model/torch/int8_linear.h"

namespace deberta::model {
namespace {

using Clock = std::chrono::steady_clock;

struct OpTotal {
  double self_seconds = 0;
  int64_t calls = 0;
};

// The profiled thread's operators: a stack of open ones, each with the time
// its callees took, and the totals by name.
struct OpStack {
  struct Open {
    std::string name;
    Clock::time_point start;
    double callee_seconds = 0;
  };
  std::vector<Open> open;
  std::map<std::string, OpTotal> totals;
};

OpStack* g_stack = nullptr;  // Set while profiling; callbacks are thread-local.

std::unique_ptr<at::ObserverContext> OnEnter(const at::RecordFunction& fn) {
  g_stack->open.push_back({fn.name(), Clock::now(), 0});
  return nullptr;
}

void OnExit(const at::RecordFunction&, at::ObserverContext*) {
  OpStack::Open op = std::move(g_stack->open.back());
  g_stack->open.pop_back();
  const double seconds = std::chrono::duration<double>(Clock::now() - op.start).count();
  OpTotal& total = g_stack->totals[op.name];
  total.self_seconds += seconds - op.callee_seconds;
  ++total.calls;
  if (!g_stack->open.empty()) g_stack->open.back().callee_seconds += seconds;
}

struct Flags {
  int threads = 2;
  std::string config = "v1", dtype = "fp32";
  int64_t batch = 1, length = 128;
  int forwards = 10;
};

bool ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    if (eq == std::string::npos) return false;
    const std::string name = arg.substr(0, eq), value = arg.substr(eq + 1);
    if (name == "--threads") {
      if (!absl::SimpleAtoi(value, &flags.threads) || flags.threads < 1) return false;
    } else if (name == "--config") {
      if (value != "v1" && value != "v3") return false;
      flags.config = value;
    } else if (name == "--dtype") {
      if (value != "fp32" && value != "bf16" && value != "int8") return false;
      flags.dtype = value;
    } else if (name == "--shape") {
      std::vector<std::string> parts = absl::StrSplit(value, 'x');
      if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &flags.batch) ||
          !absl::SimpleAtoi(parts[1], &flags.length) || flags.batch < 1 || flags.length < 1) {
        return false;
      }
    } else if (name == "--cpu_kernels") {
      if (!ForceCpuKernelMode(value)) return false;
    } else if (name == "--forwards") {
      if (!absl::SimpleAtoi(value, &flags.forwards) || flags.forwards < 1) return false;
    } else {
      return false;
    }
  }
  return true;
}

int Run(const Flags& flags) {
  ConfigureRuntime({flags.threads});
  at::globalContext().setFlushDenormal(true);
  const DebertaConfig config = BaseConfig(flags.config);
  DebertaNetwork network = RandomNetwork(config, NetworkParts{/*classifier=*/true, /*mlm_head=*/false,
                                                              /*position_table=*/false});
  if (flags.dtype == "int8") {
    if (!RequireOnednnQuantizedEngine().ok()) return 1;
    network->Prepare(Int8ComputeDType(), /*int8_encoder=*/true);
  } else {
    network->Prepare(CpuComputeDType(flags.dtype == "bf16" ? at::kBFloat16 : at::kFloat));  // As LoadNetwork does.
  }
  c10::InferenceMode guard;
  NetworkInputs inputs{at::randint(5, 1000, {flags.batch, flags.length}, at::kLong), at::Tensor(),
                       at::ones({flags.batch, flags.length})};
  std::vector<int64_t> rows;
  auto forward = [&] { return network->ClassifierLogits(inputs, &rows).value(); };  // No rows_wanted: never stops.
  for (int i = 0; i < 3; ++i) forward();  // Warm-up: the first forwards of a shape are slower.

  OpStack stack;
  g_stack = &stack;
  const at::CallbackHandle handle = at::addThreadLocalCallback(at::RecordFunctionCallback(OnEnter, OnExit));
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < flags.forwards; ++i) forward();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count() / flags.forwards;
  at::removeCallback(handle);
  g_stack = nullptr;

  std::vector<std::pair<std::string, OpTotal>> rows_by_time(stack.totals.begin(), stack.totals.end());
  double in_ops = 0;
  for (const auto& [name, total] : rows_by_time) in_ops += total.self_seconds / flags.forwards;
  rows_by_time.push_back({"(not in any operator)", {(wall - in_ops) * flags.forwards, flags.forwards}});
  std::sort(rows_by_time.begin(), rows_by_time.end(),
            [](const auto& a, const auto& b) { return a.second.self_seconds > b.second.self_seconds; });
  std::printf("deberta-base %s %s %lldx%lld, %d threads: %.2f ms per profiled forward\n", flags.config.c_str(),
              flags.dtype.c_str(), static_cast<long long>(flags.batch), static_cast<long long>(flags.length),
              flags.threads, wall * 1e3);
  std::printf("| operator | calls per forward | ms per forward | share |\n|---|---|---|---|\n");
  for (const auto& [name, total] : rows_by_time) {
    const double ms = total.self_seconds / flags.forwards * 1e3;
    if (ms < 0.01) continue;
    std::printf("| %s | %.0f | %.2f | %.1f%% |\n", name.c_str(), static_cast<double>(total.calls) / flags.forwards,
                ms, 100 * ms / (wall * 1e3));
  }
  return 0;
}

}  // namespace
}  // namespace deberta::model

int main(int argc, char** argv) {
  deberta::model::Flags flags;
  if (!deberta::model::ParseFlags(argc, argv, flags)) {
    std::fprintf(stderr,
                 "op_profile: bad flag (--threads=N --config=v1|v3 --dtype=fp32|bf16|int8 --shape=BxL "
                 "--forwards=N)\n");
    return 2;
  }
  return deberta::model::Run(flags);
}
