// int8 against float32 on base-size models (issue 12, item 2): how often
// --dtype=int8 picks the same answer as float32 over 512 random sequences
// of mixed lengths, for random-weight deberta-base (v1) and
// deberta-v3-base, classifier and fill-mask (EMD where the model has it).
//
//   build/bench/int8_agreement --threads=2 [--sequences=512] [--configs=v1,v3]
//
// Both networks get the same weights (same seed, the model benchmark's
// initialization); the int8 one is prepared as the engine's --dtype=int8.
// Random weights give near-ties that a trained model rarely has, so the
// agreement is also reported where float32's top two differ by more than
// twice the golden budget (tests/testing/golden_case.h), the rule the
// golden tests apply. Sequences run in batches of 8 sorted by length, the
// shorter ones padded, as the batcher forms them.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/random_network.h"
#include "model/runtime.h"
#include "model/torch/deberta_model.h"
#include "model/torch/int8_linear.h"

namespace deberta::model {
namespace {

// The golden budget of --dtype=int8 (tests/testing/golden_case.h).
constexpr double kClassifierBudget = 0.04, kMlmBudget = 0.6;

// The engine's two preparations of one random network.
DebertaNetwork PreparedNetwork(const DebertaConfig& config, bool int8) {
  DebertaNetwork network = RandomNetwork(config, NetworkParts{/*classifier=*/true, /*mlm_head=*/true,
                                                              /*position_table=*/true});
  if (int8) {
    network->Prepare(Int8ComputeDType(), /*int8_encoder=*/true);
  } else {
    network->Prepare(at::kFloat);
  }
  return network;
}

// One batch: sequences of the lengths given, padded to the longest; two
// predicted positions in each (never the first or last token).
struct Batch {
  NetworkInputs inputs;
  std::vector<int64_t> batch_index, position;
};

Batch MakeBatch(const std::vector<int64_t>& lengths, int64_t vocab, std::mt19937& rng) {
  const int64_t rows = static_cast<int64_t>(lengths.size());
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  Batch b;
  at::Tensor ids = at::zeros({rows, longest}, at::kLong), mask = at::zeros({rows, longest});
  std::uniform_int_distribution<int64_t> token(5, vocab - 1);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < lengths[r]; ++i) {
      ids[r][i] = token(rng);
      mask[r][i] = 1.0;
    }
    std::uniform_int_distribution<int64_t> inner(1, lengths[r] - 2);
    const int64_t first = inner(rng);
    int64_t second = inner(rng);
    while (second == first) second = inner(rng);
    for (int64_t p : {first, second}) {
      ids[r][p] = 3;  // A fixed id standing for [MASK].
      b.batch_index.push_back(r);
      b.position.push_back(p);
    }
  }
  b.inputs = NetworkInputs{ids, at::Tensor(), mask};
  return b;
}

// Agreement of one kind of output: rows whose argmax match, over all rows
// and over the rows float32 decides by more than twice the budget.
struct Agreement {
  double budget = 0;
  int64_t rows = 0, same = 0, decisive = 0, decisive_same = 0;
  double max_error = 0, sum_error = 0;
  int64_t values = 0;

  void Add(const at::Tensor& reference, const at::Tensor& int8) {
    const at::Tensor error = (int8 - reference).abs();
    max_error = std::max(max_error, error.max().item<double>());
    sum_error += error.sum().item<double>();
    values += error.numel();
    const at::Tensor top2 = std::get<0>(reference.topk(2, /*dim=*/1));
    const at::Tensor gap = top2.select(1, 0) - top2.select(1, 1);
    const at::Tensor equal = reference.argmax(1).eq(int8.argmax(1));
    const at::Tensor wide = gap.gt(2 * budget);
    rows += reference.size(0);
    same += equal.sum().item<int64_t>();
    decisive += wide.sum().item<int64_t>();
    decisive_same += equal.logical_and(wide).sum().item<int64_t>();
  }
  void Print(const char* model, const char* output) const {
    const std::string decided =
        decisive == 0 ? std::string("none that wide")
                      : absl::StrFormat("%d / %d (%.1f%%)", decisive_same, decisive, 100.0 * decisive_same / decisive);
    std::printf("| %s | %s | %lld / %lld (%.1f%%) | %s | %.4f | %.4f |\n", model, output,
                static_cast<long long>(same), static_cast<long long>(rows), 100.0 * same / rows, decided.c_str(),
                max_error, sum_error / values);
  }
};

void Compare(const char* name, const DebertaConfig& config, int sequences) {
  DebertaNetwork fp32 = PreparedNetwork(config, false), int8 = PreparedNetwork(config, true);
  const bool emd = fp32->CanRunEmd();
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int64_t> length(8, 256);
  std::vector<int64_t> lengths(sequences);
  for (int64_t& l : lengths) l = length(rng);
  std::sort(lengths.begin(), lengths.end());
  Agreement classifier{kClassifierBudget}, mlm{kMlmBudget};
  c10::InferenceMode guard;
  for (size_t start = 0; start < lengths.size(); start += 8) {
    const std::vector<int64_t> part(lengths.begin() + start,
                                    lengths.begin() + std::min(lengths.size(), start + 8));
    const Batch b = MakeBatch(part, config.vocab_size, rng);
    std::vector<int64_t> rows_a, rows_b, entries_a, entries_b;
    // No rows_wanted: nothing can stop these forwards (value() would throw).
    classifier.Add(fp32->ClassifierLogits(b.inputs, &rows_a).value(),
                   int8->ClassifierLogits(b.inputs, &rows_b).value());
    mlm.Add(fp32->MaskedLmHead(fp32->MaskedLmStates(b.inputs, emd, b.batch_index, b.position, &entries_a).value()),
            int8->MaskedLmHead(int8->MaskedLmStates(b.inputs, emd, b.batch_index, b.position, &entries_b).value()));
  }
  classifier.Print(name, "classifier");
  mlm.Print(name, emd ? "fill-mask top-1 (EMD)" : "fill-mask top-1");
  std::fflush(stdout);
}

}  // namespace
}  // namespace deberta::model

int main(int argc, char** argv) {
  int threads = 2, sequences = 512;
  std::vector<std::string> configs = {"v1", "v3"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    bool ok = false;
    if (name == "--threads") ok = absl::SimpleAtoi(value, &threads) && threads >= 1;
    if (name == "--sequences") ok = absl::SimpleAtoi(value, &sequences) && sequences >= 1;
    if (name == "--configs") {
      configs = absl::StrSplit(value, ',');
      ok = std::all_of(configs.begin(), configs.end(), [](const std::string& c) { return c == "v1" || c == "v3"; });
    }
    if (!ok) {
      std::cerr << "int8_agreement: bad flag '" << arg << "' (--threads=N --sequences=N --configs=v1,v3)\n";
      return 2;
    }
  }
  deberta::model::ConfigureRuntime({threads});
  if (absl::Status s = deberta::model::RequireOnednnQuantizedEngine(); !s.ok()) {
    std::cerr << "int8_agreement: " << s << "\n";
    return 1;
  }
  at::globalContext().setFlushDenormal(true);
  std::printf("%d random sequences of 8-256 tokens, two predicted positions each, %d threads; "
              "int8 against float32, same weights\n",
              sequences, threads);
  std::printf("| model | output | argmax equal | where float32's top-two gap > 2x budget | largest error | mean error |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const std::string& c : configs) {
    deberta::model::Compare(c == "v1" ? "deberta-base (v1)" : "deberta-v3-base", deberta::model::BaseConfig(c),
                            sequences);
  }
  return 0;
}
