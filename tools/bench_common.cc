// Benchmark sequences, results and printing.
#include "tools/bench_common.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

ABSL_FLAG(absl::Duration, duration, absl::Seconds(10), "bench, engine-bench: duration of each level");
ABSL_FLAG(int, min_len, 16, "bench, engine-bench: shortest sequence (uniform between min_len and max_len)");
ABSL_FLAG(int, max_len, 64, "bench, engine-bench: longest sequence");
ABSL_FLAG(int, vocab, 1000, "bench, engine-bench: token ids are drawn from [5, vocab)");
ABSL_FLAG(bool, json, false,
          "client, engine-bench: print JSON (bench and engine-bench the figures, other commands the answer in "
          "protobuf's JSON mapping with zero values)");

namespace deberta::tools {

double LevelResult::MeanMs() const {
  double sum = 0;
  for (double ms : latencies_ms) sum += ms;
  return latencies_ms.empty() ? 0 : sum / static_cast<double>(latencies_ms.size());
}

double LevelResult::Percentile(double p) const {
  if (latencies_ms.empty()) return 0;
  return latencies_ms[std::min(latencies_ms.size() - 1, static_cast<size_t>(p * latencies_ms.size()))];
}

BenchSequences::BenchSequences(uint32_t stream, int vocab)
    : rng_(1234 + stream),
      length_(std::max(3, absl::GetFlag(FLAGS_min_len)),
              std::max(std::max(3, absl::GetFlag(FLAGS_min_len)), absl::GetFlag(FLAGS_max_len))),
      token_(5, (vocab > 0 ? vocab : absl::GetFlag(FLAGS_vocab)) - 1) {}

std::vector<int> BenchSequences::Next() {
  const int len = length_(rng_);
  std::vector<int> ids{1};
  for (int i = 1; i < len - 1; ++i) ids.push_back(token_(rng_));
  ids.push_back(2);
  return ids;
}

int PrintResults(std::vector<LevelResult> results, const std::string& unit) {
  for (auto& r : results) {
    std::sort(r.latencies_ms.begin(), r.latencies_ms.end());
    for (auto& [code, latencies] : r.error_latencies_ms) std::sort(latencies.begin(), latencies.end());
  }
  if (absl::GetFlag(FLAGS_json)) {
    std::vector<std::string> items;
    for (const auto& r : results) {
      std::vector<std::string> errors;
      for (const auto& [code, n] : r.errors) errors.push_back(absl::StrCat("\"", code, "\": ", n));
      std::vector<std::string> error_p99;
      for (const auto& [code, latencies] : r.error_latencies_ms) {
        if (latencies.empty()) continue;
        const size_t i = std::min(latencies.size() - 1, static_cast<size_t>(0.99 * latencies.size()));
        error_p99.push_back(absl::StrCat("\"", code, "\": ", latencies[i]));
      }
      items.push_back(absl::StrCat(
          "{\"", unit, "\": ", r.level, ", \"seconds\": ", r.seconds, ", \"ok\": ", r.ok,
          ", \"sequences_per_s\": ", r.ok / r.seconds, ", \"tokens_per_s\": ", r.tokens / r.seconds,
          ", \"mean_ms\": ", r.MeanMs(), ", \"p50_ms\": ", r.Percentile(0.5), ", \"p90_ms\": ", r.Percentile(0.9),
          ", \"p99_ms\": ", r.Percentile(0.99), ", \"errors\": {", absl::StrJoin(errors, ", "),
          "}, \"error_p99_ms\": {", absl::StrJoin(error_p99, ", "), "}}"));
    }
    std::cout << "[" << absl::StrJoin(items, ",\n ") << "]\n";
  } else {
    std::printf("%-12s seq/s     tokens/s   p50_ms   p90_ms   p99_ms   ok       errors\n", unit.c_str());
    for (const auto& r : results) {
      std::vector<std::string> errors;
      for (const auto& [code, n] : r.errors) errors.push_back(absl::StrCat(code, "=", n));
      std::printf("%-12d %-9.1f %-10.1f %-8.2f %-8.2f %-8.2f %-8lld %s\n", r.level, r.ok / r.seconds,
                  r.tokens / r.seconds, r.Percentile(0.5), r.Percentile(0.9), r.Percentile(0.99),
                  static_cast<long long>(r.ok), absl::StrJoin(errors, ",").c_str());
    }
  }
  int64_t errors = 0;
  for (const auto& r : results) {
    for (const auto& [code, n] : r.errors) errors += n;
  }
  return errors == 0 ? 0 : 1;
}

}  // namespace deberta::tools
