// The cost of the task endpoints on base-size random models (issue 30, item
// 6), engine and post-processing in process, paired rounds (ABAB, then
// BABA) so that drift hits both sides alike:
//   head:    a batch's encoder forward over every position (A: to the last
//            hidden state, what any head reads) against the same batch's
//            token classification with its entities (B: that forward, the
//            token head, the copy to the host, softmax and word-level
//            aggregation, as the ClassifyTokens task does); B / A - 1 is
//            what the token head and aggregation add. (A sequence
//            classifier's forward is smaller still: its last layer runs
//            the first position alone.)
//   windows: a 2,000-token text in windows of 512 sharing 128 tokens: the
//            sum of its windows' forwards, each run alone (A), against the
//            whole windowed request (B: tokenizing and planning the text,
//            one batch of its windows as the batcher forms it, entities).
// Prints one JSON object (stamp it with bench/provenance.py).
//
//   task_bench [--threads=2] [--rounds=5] [--out_dir=/tmp/task_bench]
#include <algorithm>
#include <cstdlib>
#include <utility>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "model/demo_model.h"
#include "model/demo_tokenizer.h"
#include "model/engine_factory.h"
#include "bench/random_network.h"
#include "model/runtime.h"
#include "model/torch/cpu_backend.h"
#include "nlohmann/json.hpp"
#include "service/tasks/classify_tokens.h"

ABSL_FLAG(int, threads, 2, "LibTorch threads");
ABSL_FLAG(int, rounds, 5, "paired rounds");
ABSL_FLAG(int, repeats, 7, "runs per side per round of the head figures (the median is kept; windows: 3)");
ABSL_FLAG(std::string, out_dir, "/tmp/task_bench", "where the random checkpoints are written (kept for reuse)");

namespace deberta {
namespace {

namespace pb = serving::v1;
using nlohmann::json;

std::unique_ptr<model::Engine> Engine(model::RandomModelTask task, const std::string& name) {
  const std::string dir = absl::GetFlag(FLAGS_out_dir) + "/" + name;
  if (!std::filesystem::exists(dir + "/model.safetensors")) {
    std::filesystem::create_directories(dir);
    model::RandomModelShape shape = model::DebertaV3BaseShape();
    shape.task = task;
    if (absl::Status s = model::WriteRandomCheckpoint(dir, shape); !s.ok()) {
      std::cerr << s << "\n";
      std::exit(1);
    }
  }
  model::EngineOptions options;
  options.model = dir;
  options.num_threads = absl::GetFlag(FLAGS_threads);
  auto engine = model::CreateTorchEngine(options);
  if (!engine.ok()) {
    std::cerr << engine.status() << "\n";
    std::exit(1);
  }
  return *std::move(engine);
}

double Seconds(const std::function<void()>& run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// A text of at least `tokens` tokens (a word more at most): English-like words.
std::string TextOf(const model::Tokenizer& tokenizer, int tokens) {
  static const char* kWords[] = {"Maria", "Lopez", "joined", "the", "finance", "team", "in", "Vienna", "last",
                                 "May", "after", "years", "at", "Siemens", "where", "she", "led", "research"};
  std::string text;
  for (size_t i = 0; static_cast<int>(tokenizer.Tokenize(text)->size()) < tokens; ++i) {
    absl::StrAppend(&text, i ? " " : "", kWords[i % std::size(kWords)]);
  }
  return text;
}

// Runs a and b `repeats` times each per round, alternating which goes
// first; the per-round medians and their ratio b / a.
json Paired(const std::function<void()>& a, const std::function<void()>& b, int repeats) {
  a();  // Warm: the first run of a shape pays one-time costs.
  b();
  json rounds = json::array();
  std::vector<double> ratios;
  for (int r = 0; r < absl::GetFlag(FLAGS_rounds); ++r) {
    std::vector<double> ta, tb;
    for (int k = 0; k < repeats; ++k) {
      if ((r + k) % 2 == 0) {
        ta.push_back(Seconds(a));
        tb.push_back(Seconds(b));
      } else {
        tb.push_back(Seconds(b));
        ta.push_back(Seconds(a));
      }
    }
    const double ma = Median(ta), mb = Median(tb);
    ratios.push_back(mb / ma);
    rounds.push_back({{"a_seconds", ma}, {"b_seconds", mb}, {"ratio", mb / ma}});
  }
  return {{"rounds", rounds},
          {"ratio_median", Median(ratios)},
          {"ratio_max", *std::max_element(ratios.begin(), ratios.end())}};
}

service::RequestOptions Options(const model::Tokenizer* tokenizer) {
  service::RequestOptions options;
  options.tokenizer = tokenizer;
  options.max_windows = 16;
  return options;
}

int Main() {
  model::RuntimeOptions runtime;
  runtime.num_threads = absl::GetFlag(FLAGS_threads);
  model::ConfigureRuntime(runtime);
  std::unique_ptr<model::Engine> tagger = Engine(model::RandomModelTask::kTokenClassification, "token_classifier");
  if (absl::Status s = tagger->InitializeThread(); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  auto tokenizer = model::LoadTokenizer(absl::GetFlag(FLAGS_out_dir) + "/token_classifier");
  if (!tokenizer.ok()) {
    std::cerr << tokenizer.status() << "\n";
    return 1;
  }
  const service::RequestOptions options = Options(tokenizer->get());
  const model::SpecialTokens special = (*tokenizer)->special_tokens();
  const std::vector<std::string> labels = tagger->info().labels;
  json out = {{"benchmark", "task_bench"},
              {"model", "random deberta-v3-base (DebertaV3BaseShape) with a token head of 9 labels, float32, "
                        "demo GPT-2 tokenizer"},
              {"threads", absl::GetFlag(FLAGS_threads)},
              {"rounds", absl::GetFlag(FLAGS_rounds)},
              {"repeats", absl::GetFlag(FLAGS_repeats)}};

  // Head: the network of the engine's model (same config, random weights),
  // float32, prepared as the engine prepares it.
  model::DebertaConfig config = model::BaseConfig("v3");
  config.labels = tagger->info().labels;
  model::NetworkParts parts;
  parts.token_classifier = true;
  model::DebertaNetwork network = model::RandomNetwork(config, parts);
  network->Prepare(model::CpuComputeDType(at::kFloat));
  at::set_num_threads(absl::GetFlag(FLAGS_threads));
  c10::InferenceMode inference;
  for (auto [batch, length] : {std::pair{1, 128}, std::pair{8, 128}, std::pair{1, 512}}) {
    pb::ClassifyTokensRequest request;
    request.set_aggregation(pb::AGGREGATION_FIRST);
    // A word's tokens below the length, so that none needs truncating.
    for (int i = 0; i < batch; ++i) request.add_sequences()->set_text(TextOf(**tokenizer, length - 8 + i % 2));
    auto built = service::BuildClassifyTokensInputs(request, tagger->info(), special, options);
    if (!built.ok()) {
      std::cerr << built.status() << "\n";
      return 1;
    }
    // The padded batch, as the engine builds it.
    int64_t longest = 0;
    for (const auto& input : built->inputs) {
      longest = std::max<int64_t>(longest, static_cast<int64_t>(input.sequences.front().token_ids.size()));
    }
    at::Tensor ids = at::zeros({batch, longest}, at::kLong), mask = at::zeros({batch, longest});
    json lengths = json::array();
    for (int i = 0; i < batch; ++i) {
      const std::vector<int32_t>& tokens = built->inputs[i].sequences.front().token_ids;
      for (size_t t = 0; t < tokens.size(); ++t) {
        ids[i][static_cast<int64_t>(t)] = tokens[t];
        mask[i][static_cast<int64_t>(t)] = 1;
      }
      lengths.push_back(tokens.size());
    }
    const model::NetworkInputs inputs{ids, at::Tensor(), mask};
    size_t entities = 0;
    json result = Paired(
        [&] { (void)network->Encode(inputs, model::LastLayerPositions::kAll).value().states.back().sum().item<float>(); },
        [&] {
          const model::EncodedBatch encoded = network->Encode(inputs, model::LastLayerPositions::kAll).value();
          const at::Tensor logits = network->TokenClassifierLogits(encoded).to(at::kCPU).contiguous();
          const int64_t stride = logits.size(1) * logits.size(2);
          entities = 0;
          for (int i = 0; i < batch; ++i) {
            model::TokenClassifyOutput output;
            output.num_labels = static_cast<int32_t>(logits.size(2));
            const float* first = logits.data_ptr<float>() + i * stride;
            output.logits.assign(first, first + built->inputs[i].sequences.front().token_ids.size() * logits.size(2));
            entities += service::InputEntities(built->inputs[i], {output}, *built, labels).size();
          }
        },
        absl::GetFlag(FLAGS_repeats));
    result["shape"] = absl::StrCat(batch, "x", length);
    result["sequence_lengths"] = lengths;
    result["a"] = "encoder forward over every position (DebertaNetwork::Encode, LastLayerPositions::kAll)";
    result["b"] = "the same forward + token head + host copy + entities (AGGREGATION_FIRST, as the ClassifyTokens task)";
    result["entities_last_run"] = entities;
    out["head"].push_back(result);
    std::cerr << result.dump() << "\n";
  }

  // Windows: 2,000 tokens in windows of 512 with stride 128.
  pb::ClassifyTokensRequest request;
  request.set_aggregation(pb::AGGREGATION_FIRST);
  request.set_max_length(512);
  request.mutable_long_input()->set_mode(pb::LongInput::MODE_WINDOWS);
  request.mutable_long_input()->set_stride(128);
  request.add_sequences()->set_text(TextOf(**tokenizer, 2000));
  auto planned = service::BuildClassifyTokensInputs(request, tagger->info(), special, options);
  if (!planned.ok()) {
    std::cerr << planned.status() << "\n";
    return 1;
  }
  const std::vector<model::Sequence> windows = planned->inputs[0].sequences;
  json result = Paired(
      [&] {
        for (const model::Sequence& window : windows) (void)tagger->ClassifyTokens({window});
      },
      [&] {
        auto built = service::BuildClassifyTokensInputs(request, tagger->info(), special, options);
        auto outputs = tagger->ClassifyTokens(built->inputs[0].sequences);
        (void)service::InputEntities(built->inputs[0], *outputs, *built, labels);
      },
      3);
  result["content_tokens"] = planned->inputs[0].num_tokens - 2;
  result["windows"] = windows.size();
  result["a"] = "the sum of the windows' forwards, each run alone (Engine::ClassifyTokens, batch 1)";
  result["b"] = "the windowed request: tokenize + plan, one batch of its windows, entities (AGGREGATION_FIRST)";
  out["windows"] = result;
  std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace
}  // namespace deberta

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return deberta::Main();
}
