// The engine alone, on bench's sequences (or, with --send_text, the
// sequences the server makes of bench's texts).
#include "tools/engine_bench.h"

#include <iostream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/time/clock.h"
#include "model/demo_model.h"
#include "model/demo_tokenizer.h"
#include "model/tokenizer.h"
#include "service/tasks/classify.h"
#include "tools/bench_common.h"
#include "tools/bench_texts.h"

ABSL_FLAG(int, batch_size, 32, "engine-bench: sequences per engine call");
ABSL_DECLARE_FLAG(bool, send_text);
ABSL_DECLARE_FLAG(std::string, model);

namespace deberta::tools {
namespace {

// One sequence the engine runs for a text, and the share of the text's
// tokens it stands for (a text of n tokens in k windows: n / k each), so
// that the rate counts tokens as bench counts the server's.
struct WeightedSequence {
  model::Sequence sequence;
  double tokens = 0;
};

// --send_text: bench's texts (every stream) made with the checkpoint's own
// tokenizer, turned into engine sequences by the server's request builder
// (tokenization, truncation, windows) from the request bench sends.
absl::StatusOr<std::vector<WeightedSequence>> TextSequences(const model::ModelInfo& info) {
  const std::string dir = absl::GetFlag(FLAGS_model);
  absl::StatusOr<std::unique_ptr<model::Tokenizer>> tokenizer =
      dir == model::kDemoModelName ? model::DemoTokenizer() : model::LoadTokenizer(dir);
  if (!tokenizer.ok()) return tokenizer.status();
  auto decode = [&](const std::vector<int>& ids) { return (*tokenizer)->Decode({ids.data(), ids.size()}); };
  service::RequestOptions options;
  options.tokenizer = tokenizer->get();
  options.mask_token_id = (*tokenizer)->special_tokens().mask;
  std::vector<WeightedSequence> out;
  for (uint32_t stream = 0; stream < kBenchTextStreams; ++stream) {
    absl::StatusOr<std::vector<std::string>> texts =
        MakeBenchTexts(stream, (*tokenizer)->vocab_size(), decode);
    if (!texts.ok()) return texts.status();
    for (const std::string& text : *texts) {
      absl::StatusOr<serving::v1::ClassifyRequest> request = BenchClassifyRequest(text);
      if (!request.ok()) return request.status();
      absl::StatusOr<service::ClassifyInputs> inputs = service::BuildClassifyInputs(*request, info, options);
      if (!inputs.ok()) return inputs.status();
      for (service::ClassifyInput& input : inputs->sequences) {
        const double share = static_cast<double>(input.num_tokens) / static_cast<double>(input.sequences.size());
        for (model::Sequence& s : input.sequences) out.push_back({std::move(s), share});
      }
    }
  }
  return out;
}

}  // namespace

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
  // The sequences in turn: bench's id sequences, or with --send_text its
  // texts' (each text's windows one after the other, batched as they come).
  BenchSequences sequences(0);
  std::vector<WeightedSequence> text_sequences;
  if (absl::GetFlag(FLAGS_send_text)) {
    absl::StatusOr<std::vector<WeightedSequence>> made = TextSequences(engine.info());
    if (!made.ok()) {
      std::cerr << "engine-bench --send_text: " << made.status() << "\n";
      return 1;
    }
    text_sequences = *std::move(made);
  }
  size_t next_text_sequence = 0;
  double batch_tokens = 0;  // Tokens of the last batch made, as counted.
  auto next_batch = [&] {
    std::vector<model::Sequence> batch(batch_size);
    batch_tokens = 0;
    for (auto& s : batch) {
      if (!text_sequences.empty()) {
        const WeightedSequence& next = text_sequences[next_text_sequence++ % text_sequences.size()];
        s = next.sequence;
        batch_tokens += next.tokens;
      } else {
        std::vector<int> ids = sequences.Next();
        s.token_ids.assign(ids.begin(), ids.end());
        batch_tokens += static_cast<double>(ids.size());
      }
    }
    return batch;
  };
  if (auto warm = engine.Classify(next_batch()); !warm.ok()) {
    std::cerr << "engine-bench: " << warm.status() << "\n";
    return 1;
  }
  LevelResult result;
  result.level = batch_size;
  double tokens = 0;
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
    tokens += batch_tokens;
    result.latencies_ms.push_back(ms);
  }
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  result.tokens = static_cast<int64_t>(tokens + 0.5);
  return PrintResults({std::move(result)}, "batch_size");
}

}  // namespace deberta::tools
