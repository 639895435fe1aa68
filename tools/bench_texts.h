// The text side of the benchmarks (--send_text), shared by bench (through
// a server) and engine-bench (the engine alone) so that both run the same
// texts in the same requests: texts made of random ids of the model's own
// tokenizer, and the Classify request that carries one, with the client's
// --max_length, --windows, --stride and --aggregate.
#ifndef DEBERTA_TOOLS_BENCH_TEXTS_H_
#define DEBERTA_TOOLS_BENCH_TEXTS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deberta/serving/v1/inference.pb.h"

namespace deberta::tools {

// Streams of texts and texts per stream: bench's client k sends stream
// k % kBenchTextStreams in turn; engine-bench runs them all.
inline constexpr int kBenchTextStreams = 8;
inline constexpr int kBenchTextsPerStream = 32;

// Decodes content ids to text (the server's Detokenize, or the tokenizer).
using DecodeIds = std::function<absl::StatusOr<std::string>(const std::vector<int>&)>;

// Stream `stream`'s texts: kBenchTextsPerStream of BenchSequences(stream,
// vocab_size - 1) (no [MASK]; lengths from --min_len, --max_len) through
// `decode`. Reproducible: the same ids and decoder give the same texts.
absl::StatusOr<std::vector<std::string>> MakeBenchTexts(uint32_t stream, int vocab_size, const DecodeIds& decode);

// The Classify request bench sends for `text`: --max_length (with
// longest_first truncation when set), and windows when --windows is set
// (--stride, --aggregate). InvalidArgument for a bad --aggregate.
absl::StatusOr<serving::v1::ClassifyRequest> BenchClassifyRequest(const std::string& text);

}  // namespace deberta::tools

#endif  // DEBERTA_TOOLS_BENCH_TEXTS_H_
