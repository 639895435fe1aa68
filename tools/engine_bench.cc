// The engine alone, on bench's sequences.
#include "tools/engine_bench.h"

#include <iostream>

#include "absl/flags/flag.h"
#include "absl/time/clock.h"
#include "tools/bench_common.h"

ABSL_FLAG(int, batch_size, 32, "engine-bench: sequences per engine call");

namespace deberta::tools {

int EngineBenchCommand(model::Engine& engine) {
  const int batch_size = absl::GetFlag(FLAGS_batch_size);
  if (batch_size < 1) {
    std::cerr << "--batch_size must be >= 1\n";
    return 2;
  }
  // The same per-thread set-up and warm-up the server's executor gets.
  if (absl::Status s = engine.InitializeThread(); !s.ok()) {
    std::cerr << "engine-bench: " << s << "\n";
    return 1;
  }
  BenchSequences sequences(0);
  auto next_batch = [&] {
    std::vector<model::Sequence> batch(batch_size);
    for (auto& s : batch) {
      std::vector<int> ids = sequences.Next();
      s.token_ids.assign(ids.begin(), ids.end());
    }
    return batch;
  };
  if (auto warm = engine.Classify(next_batch()); !warm.ok()) {
    std::cerr << "engine-bench: " << warm.status() << "\n";
    return 1;
  }
  LevelResult result;
  result.level = batch_size;
  const absl::Time start = absl::Now(), end = start + absl::GetFlag(FLAGS_duration);
  while (absl::Now() < end) {
    std::vector<model::Sequence> batch = next_batch();
    const absl::Time t0 = absl::Now();
    auto out = engine.Classify(batch);
    const double ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
    if (!out.ok()) {
      ++result.errors[absl::StatusCodeToString(out.status().code())];
      continue;
    }
    result.ok += batch_size;
    for (const auto& s : batch) result.tokens += static_cast<int64_t>(s.token_ids.size());
    result.latencies_ms.push_back(ms);
  }
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return PrintResults({std::move(result)}, "batch_size");
}

}  // namespace deberta::tools
