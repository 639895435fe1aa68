// Tokenization speed (issue 9, item 8): encoding one 128-token text as
// [CLS] ... [SEP] with each golden tokenizer (SentencePiece and GPT-2
// byte-level BPE), on the calling thread only. The texts are made from the
// tokenizer's own vocabulary (random pieces, decoded) until they tokenize
// to 126 content tokens. Compare with model_bench's batch-1 forward of 128
// tokens on deberta-base size in the same run (bench/text_bench.sh).
//
//   build/bench/tokenize_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <random>

#include "model/text_encoding.h"
#include "model/tokenizer.h"

namespace deberta::model {
namespace {

// A text of `tokens` content tokens from random ids of the vocabulary.
std::string MakeText(const Tokenizer& tokenizer, size_t tokens, uint32_t seed) {
  std::mt19937 rng(seed);
  const SpecialTokens& special = tokenizer.special_tokens();
  std::uniform_int_distribution<int32_t> id(special.unk + 1, tokenizer.vocab_size() - 1);
  std::vector<int32_t> ids;
  std::string text;
  while (true) {
    const int32_t next = id(rng);
    if (next == special.mask) continue;
    ids.push_back(next);
    auto decoded = tokenizer.Decode(ids);
    auto count = tokenizer.Tokenize(decoded.ok() ? *decoded : "");
    if (!decoded.ok() || !count.ok()) continue;
    if (count->size() > tokens) break;
    text = *decoded;
  }
  return text;
}

void BM_Encode(benchmark::State& state, const std::string& name) {
  auto tokenizer = LoadTokenizer(std::string(DEBERTA_GOLDEN_TOKENIZERS_DIR) + "/" + name);
  if (!tokenizer.ok()) {
    state.SkipWithError(std::string(tokenizer.status().message()).c_str());
    return;
  }
  std::vector<std::string> texts;
  for (uint32_t seed = 0; seed < 16; ++seed) texts.push_back(MakeText(**tokenizer, 126, seed));
  size_t i = 0;
  int64_t tokens = 0;
  for (auto _ : state) {
    auto encoded = EncodeText(**tokenizer, texts[i++ % texts.size()], std::nullopt, 512, Truncation::kNone);
    tokens += static_cast<int64_t>(encoded->input_ids.size());
    benchmark::DoNotOptimize(encoded);
  }
  state.counters["tokens_per_text"] = static_cast<double>(tokens) / static_cast<double>(state.iterations());
  state.counters["us_per_text"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK_CAPTURE(BM_Encode, spm_v3_like, std::string("spm_v3_like"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Encode, spm_multilingual, std::string("spm_multilingual"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Encode, gpt2_v1_like, std::string("gpt2_v1_like"))->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace deberta::model

BENCHMARK_MAIN();
