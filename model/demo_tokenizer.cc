// The demo model's tokenizer, and checkpoint folders written with its files:
// the part of the demo model that needs the tokenizers (ICU), apart from
// demo_model.cc so that a build without tokenizers
// (-DDEBERTA_WITH_TOKENIZERS=OFF, the GPU check's) keeps the demo network.
// Its vocabulary: GPT-2 byte-level BPE merges learned from a built-in English
// text, the same files on every machine.
#include "model/demo_tokenizer.h"

#include <array>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "model/demo_model.h"
#include "model/gpt2_tokenizer.h"
#include "model/status_macros.h"
#include "nlohmann/json.hpp"

namespace deberta::model {

namespace {

// The demo tokenizer's training text: plain English, written for this.
constexpr char kDemoCorpus[] =
    "The quick brown fox jumps over the lazy dog. A server answers requests from many clients at once, "
    "and the batcher groups their sequences by length so that little work is spent on padding. "
    "Paris is the capital of France, and Berlin is the capital of Germany. The weather is nice today; "
    "people are walking in the park, children are playing, and a man is playing a guitar on the stage. "
    "This model was not trained: its weights are random numbers, so its answers carry no meaning. "
    "It is here so that the service can be tried without downloading anything. Text goes in, the "
    "tokenizer turns it into pieces and ids, the network computes its logits, and the answer comes back. "
    "Numbers such as 1, 2, 3, 10, 100, 2024 and 3.14 appear in text too, as do questions? And answers! "
    "What is the best way to serve a language model in production? Measure first, then make it faster. "
    "The hypothesis is that this example is about sports, politics, science, music, travel or food. "
    "She said that the movie was wonderful, but he thought it was boring and too long. We will see.";

DemoTokenizerFiles MakeDemoTokenizerFiles() {
  const std::array<std::string, 256> bytes = Gpt2Tokenizer::ByteSymbols();
  // Words (pre-tokens) as symbol lists, with their counts, in first-seen
  // order so that the result does not depend on hashing.
  std::vector<std::vector<std::string>> words;
  std::vector<int> counts;
  std::map<std::string, size_t> index;
  for (absl::string_view word : Gpt2Tokenizer::PreTokenize(kDemoCorpus)) {
    auto [it, inserted] = index.emplace(std::string(word), words.size());
    if (inserted) {
      std::vector<std::string> symbols;
      for (unsigned char b : word) symbols.push_back(bytes[b]);
      words.push_back(std::move(symbols));
      counts.push_back(0);
    }
    ++counts[it->second];
  }
  nlohmann::ordered_json vocab;
  int next_id = 0;
  for (const char* special : {"[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"}) vocab[special] = next_id++;
  for (const std::string& symbol : bytes) vocab[symbol] = next_id++;
  std::string merges = "#version: 0.2\n";
  const int vocab_size = static_cast<int>(DemoModelShape().vocab);
  while (next_id < vocab_size) {
    // The most frequent adjacent pair; ties go to the smaller pair.
    std::map<std::pair<std::string, std::string>, int> pairs;
    for (size_t w = 0; w < words.size(); ++w) {
      for (size_t k = 0; k + 1 < words[w].size(); ++k) pairs[{words[w][k], words[w][k + 1]}] += counts[w];
    }
    auto best = pairs.end();
    for (auto it = pairs.begin(); it != pairs.end(); ++it) {
      if (best == pairs.end() || it->second > best->second) best = it;
    }
    if (best == pairs.end()) break;  // Every word is one symbol.
    const auto [left, right] = best->first;
    merges += left + " " + right + "\n";
    vocab[left + right] = next_id++;
    for (auto& symbols : words) {
      std::vector<std::string> merged;
      for (size_t k = 0; k < symbols.size(); ++k) {
        if (k + 1 < symbols.size() && symbols[k] == left && symbols[k + 1] == right) {
          merged.push_back(left + right);
          ++k;
        } else {
          merged.push_back(symbols[k]);
        }
      }
      symbols = std::move(merged);
    }
  }
  return {vocab.dump(), merges};
}

}  // namespace

const DemoTokenizerFiles& GetDemoTokenizerFiles() {
  static const DemoTokenizerFiles* files = new DemoTokenizerFiles(MakeDemoTokenizerFiles());
  return *files;
}

absl::StatusOr<std::unique_ptr<Tokenizer>> DemoTokenizer() {
  const DemoTokenizerFiles& files = GetDemoTokenizerFiles();
  absl::StatusOr<std::unique_ptr<Gpt2Tokenizer>> tokenizer =
      Gpt2Tokenizer::FromText(files.vocab_json, files.merges_txt, kDemoModelName);
  if (!tokenizer.ok()) return tokenizer.status();
  return std::unique_ptr<Tokenizer>(*std::move(tokenizer));
}

absl::Status WriteDemoCheckpoint(const std::string& dir) {
  return WriteRandomCheckpoint(dir, DemoModelShape());
}

absl::Status WriteRandomCheckpoint(const std::string& dir, const RandomModelShape& shape) {
  auto write_text = [](const std::string& path, const std::string& text) -> absl::Status {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
    return absl::OkStatus();
  };
  DEBERTA_RETURN_IF_ERROR(write_text(dir + "/config.json", RandomConfigJson(shape)));
  DEBERTA_RETURN_IF_ERROR(write_text(dir + "/model.safetensors", RandomCheckpointBytes(shape)));
  if (shape.vocab >= DemoModelShape().vocab) {
    DEBERTA_RETURN_IF_ERROR(write_text(dir + "/vocab.json", GetDemoTokenizerFiles().vocab_json));
    DEBERTA_RETURN_IF_ERROR(write_text(dir + "/merges.txt", GetDemoTokenizerFiles().merges_txt));
  }
  return write_text(dir + "/tokenizer_config.json",
                    absl::StrCat(R"({"pad_token": "[PAD]", "cls_token": "[CLS]", "sep_token": "[SEP]", )",
                                 R"("unk_token": "[UNK]", "mask_token": "[MASK]", "added_tokens_decoder": {)",
                                 R"("0": {"content": "[PAD]"}, "1": {"content": "[CLS]"}, )",
                                 R"("2": {"content": "[SEP]"}, "3": {"content": "[UNK]"}, )",
                                 R"("4": {"content": "[MASK]"}}})"));
}

}  // namespace deberta::model
