// `deberta-cli bench`: a closed-loop load generator against a server. For
// each --concurrency level, that many clients each send one sequence per
// request, back to back, for --duration; prints throughput and latency.
//   deberta-cli bench --concurrency=1,8,32 --duration=10s --min_len=16 --max_len=64
#ifndef DEBERTA_TOOLS_LOAD_GENERATOR_H_
#define DEBERTA_TOOLS_LOAD_GENERATOR_H_

namespace deberta::tools {

// Returns the exit code: 1 if any request failed, 2 for bad flags.
int BenchCommand();

}  // namespace deberta::tools

#endif  // DEBERTA_TOOLS_LOAD_GENERATOR_H_
