// The benchmarks' texts and the Classify request that carries one.
#include "tools/bench_texts.h"

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "tools/bench_common.h"
#include "tools/client_commands.h"
#include "tools/grpc_client.h"

ABSL_DECLARE_FLAG(int, max_length);

namespace deberta::tools {

absl::StatusOr<std::vector<std::string>> MakeBenchTexts(uint32_t stream, int vocab_size, const DecodeIds& decode) {
  BenchSequences sequences(stream, vocab_size - 1);  // Not [MASK], the last id.
  std::vector<std::string> texts;
  for (int i = 0; i < kBenchTextsPerStream; ++i) {
    absl::StatusOr<std::string> text = decode(sequences.Next());
    if (!text.ok()) return text.status();
    texts.push_back(*std::move(text));
  }
  return texts;
}

absl::StatusOr<serving::v1::ClassifyRequest> BenchClassifyRequest(const std::string& text) {
  serving::v1::ClassifyRequest request;
  request.set_model(ModelNameFromFlags());
  request.add_sequences()->set_text(text);
  request.set_truncation(TruncationFromFlags());
  request.set_max_length(absl::GetFlag(FLAGS_max_length));
  if (!LongInputFromFlags(request.mutable_long_input())) {
    return absl::InvalidArgumentError("bad --aggregate");
  }
  return request;
}

}  // namespace deberta::tools
