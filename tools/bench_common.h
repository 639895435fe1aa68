// What the two benchmarks of deberta-cli share: the sequences they send
// (bench to a server, engine-bench to the engine alone, so their figures
// compare), the per-level results and their printing (table or --json).
#ifndef DEBERTA_TOOLS_BENCH_COMMON_H_
#define DEBERTA_TOOLS_BENCH_COMMON_H_

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/time/time.h"

ABSL_DECLARE_FLAG(absl::Duration, duration);
ABSL_DECLARE_FLAG(bool, json);

namespace deberta::tools {

// One measured level: a concurrency (bench) or a batch size (engine-bench).
struct LevelResult {
  int level = 0;
  double seconds = 0;
  int64_t ok = 0, tokens = 0;
  std::map<std::string, int64_t> errors;  // By status code name.
  std::vector<double> latencies_ms;       // Of OK answers; sorted before printing.
  std::map<std::string, std::vector<double>> error_latencies_ms;  // By code.

  double MeanMs() const;
  double Percentile(double p) const;
};

// Benchmark sequences: [CLS] random ids [SEP], lengths uniform in
// [--min_len, --max_len], ids in [5, --vocab) (or [5, vocab) when given).
// Each stream (one per client) is reproducible.
class BenchSequences {
 public:
  explicit BenchSequences(uint32_t stream, int vocab = 0);
  std::vector<int> Next();

 private:
  std::mt19937 rng_;
  std::uniform_int_distribution<int> length_, token_;
};

// Prints results as a table or, with --json, JSON; `unit` names the first
// column ("concurrency", "batch_size"). Returns the exit code: 1 if any
// request failed.
int PrintResults(std::vector<LevelResult> results, const std::string& unit);

}  // namespace deberta::tools

#endif  // DEBERTA_TOOLS_BENCH_COMMON_H_
