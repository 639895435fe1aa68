// make_bench_tokenizers: real-size tokenizers for the text benchmarks
// (issue 33, item 5), since none ships with the random models: a
// DeBERTa-v3-like SentencePiece unigram model of 128,000 pieces and a
// DeBERTa-v1-like GPT-2 byte-level BPE of 50,000 merges, trained here on
// text this program makes up, each written as a checkpoint folder's
// tokenizer files (as tests/golden_tokenizers lays them out).
//
//   build/bench/make_bench_tokenizers OUT_DIR
//     -> OUT_DIR/spm-128k/{spm.model, tokenizer_config.json, special_tokens_map.json}
//        OUT_DIR/gpt2-50k/{vocab.json, merges.txt, tokenizer_config.json, special_tokens_map.json}
//        OUT_DIR/corpus.txt
//
// The corpus is English-like prose from a fixed seed: invented words drawn
// from a Zipf law (short words the most frequent, as in a real language),
// capitals, numbers and punctuation. Its statistics, not its meaning, are
// what a tokenizer's speed depends on: vocabulary size, piece lengths, the
// number of merges a word goes through.
//
// No abseil in this file: SentencePiece's headers bring their own
// absl::string_view (see model/sentencepiece_plugin.cc).
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <queue>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

constexpr int kLexiconWords = 250000;
constexpr int kCorpusLines = 200000;
constexpr int kSentencePieces = 128000;  // microsoft/deberta-v3-*'s spm.model size.
constexpr int kGpt2Merges = 50000;       // GPT-2's (and DeBERTa v1's) count.
constexpr uint64_t kSeed = 20261207;

// Made-up English-like text from a fixed seed (std::mt19937_64 is the same
// sequence on every platform; only the modulo and the Zipf table are used
// on top of it, so the corpus is too).
class TextMaker {
 public:
  TextMaker() : rng_(kSeed) {
    MakeLexicon();
    double total = 0;
    for (int rank = 0; rank < kLexiconWords; ++rank) {
      total += 1.0 / (rank + 2.7);  // Zipf-Mandelbrot with exponent 1.
      cumulative_.push_back(total);
    }
  }

  // One line: one to three sentences.
  std::string Line() {
    std::string line;
    const int sentences = 1 + static_cast<int>(Below(3));
    for (int s = 0; s < sentences; ++s) {
      if (s > 0) line += ' ';
      line += Sentence();
    }
    return line;
  }

 private:
  uint64_t Below(uint64_t n) { return rng_() % n; }
  double Uniform() { return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0); }

  void MakeLexicon() {
    static const char* const kOnsets[] = {"",   "b",  "c",  "d",  "f",  "g",  "h",  "j",  "k",  "l",  "m",
                                          "n",  "p",  "r",  "s",  "t",  "v",  "w",  "y",  "z",  "br", "cr",
                                          "dr", "fr", "gr", "pr", "tr", "bl", "cl", "fl", "gl", "pl", "sl",
                                          "sh", "ch", "th", "st", "sp", "sk", "qu", "wh"};
    static const char* const kNuclei[] = {"a", "e", "i", "o", "u", "y", "ai", "ea", "ee", "oo", "ou", "ie", "oa"};
    static const char* const kCodas[] = {"",  "",   "",   "n",  "r",  "s",  "t",  "l",  "m", "d",
                                         "ng", "nt", "st", "ck", "th", "rd", "ll", "ss", "x"};
    auto pick = [this](const auto& list) { return list[Below(std::size(list))]; };
    std::unordered_set<std::string> seen;
    while (static_cast<int>(lexicon_.size()) < kLexiconWords) {
      const uint64_t roll = Below(100);
      const int syllables = roll < 30 ? 1 : roll < 70 ? 2 : roll < 92 ? 3 : 4;
      std::string word;
      for (int i = 0; i < syllables; ++i) word = word + pick(kOnsets) + pick(kNuclei) + pick(kCodas);
      if (seen.insert(word).second) lexicon_.push_back(word);
    }
    // The most frequent words are the shortest, as in natural languages.
    std::stable_sort(lexicon_.begin(), lexicon_.end(),
                     [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  }

  const std::string& Word() {
    const double at = Uniform() * cumulative_.back();
    const size_t rank = std::upper_bound(cumulative_.begin(), cumulative_.end(), at) - cumulative_.begin();
    return lexicon_[std::min(rank, lexicon_.size() - 1)];
  }

  std::string Sentence() {
    std::string sentence;
    const int words = 5 + static_cast<int>(Below(22));
    for (int i = 0; i < words; ++i) {
      if (i > 0) sentence += ' ';
      const uint64_t roll = Below(1000);
      if (roll < 15) {
        sentence += std::to_string(1900 + Below(130));  // A year.
      } else if (roll < 30) {
        sentence += std::to_string(Below(100000));
      } else {
        std::string word = Word();
        if (i == 0 || roll < 80) word[0] = static_cast<char>(word[0] - 'a' + 'A');  // Names.
        sentence += word;
      }
      if (i + 1 < words && Below(100) < 6) sentence += ',';
    }
    const uint64_t end = Below(100);
    sentence += end < 85 ? "." : end < 95 ? "?" : "!";
    return sentence;
  }

  std::mt19937_64 rng_;
  std::vector<std::string> lexicon_;
  std::vector<double> cumulative_;
};

void WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string TokenizerConfig(const char* vocab_type, const char* tokenizer_class, const char* extra) {
  return std::string("{\n \"do_lower_case\": false,\n \"vocab_type\": \"") + vocab_type +
         "\",\n \"bos_token\": \"[CLS]\",\n \"eos_token\": \"[SEP]\",\n \"unk_token\": \"[UNK]\",\n"
         " \"sep_token\": \"[SEP]\",\n \"pad_token\": \"[PAD]\",\n \"cls_token\": \"[CLS]\",\n"
         " \"mask_token\": \"[MASK]\",\n" +
         extra + " \"model_max_length\": 512,\n \"tokenizer_class\": \"" + tokenizer_class + "\"\n}\n";
}

const char kSpecialTokensMap[] =
    "{\n \"bos_token\": \"[CLS]\",\n \"eos_token\": \"[SEP]\",\n \"unk_token\": \"[UNK]\",\n"
    " \"sep_token\": \"[SEP]\",\n \"pad_token\": \"[PAD]\",\n \"cls_token\": \"[CLS]\",\n"
    " \"mask_token\": \"[MASK]\"\n}\n";

// The SentencePiece folder: unigram, as microsoft/deberta-v3-*'s spm.model
// ([PAD] [CLS] [SEP] [UNK] = 0-3; [MASK] is the id after the last piece).
void MakeSentencePiece(const std::filesystem::path& corpus, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const std::string args = "--input=" + corpus.string() + " --model_prefix=" + (dir / "spm").string() +
                           " --vocab_size=" + std::to_string(kSentencePieces) +
                           " --model_type=unigram --character_coverage=0.9995 --normalization_rule_name=nmt_nfkc"
                           " --pad_id=0 --bos_id=1 --eos_id=2 --unk_id=3 --pad_piece=[PAD] --bos_piece=[CLS]"
                           " --eos_piece=[SEP] --unk_piece=[UNK] --num_threads=1 --minloglevel=1";
  // A fixed seed and one thread: the same spm.model on every run.
  sentencepiece::SetRandomGeneratorSeed(static_cast<unsigned int>(kSeed));
  const auto status = sentencepiece::SentencePieceTrainer::Train(args);
  if (!status.ok()) throw std::runtime_error("SentencePiece training failed: " + status.ToString());
  std::filesystem::remove(dir / "spm.vocab");
  WriteFile(dir / "tokenizer_config.json",
            TokenizerConfig("spm", "DebertaV2Tokenizer", " \"split_by_punct\": false,\n \"sp_model_kwargs\": {},\n"));
  WriteFile(dir / "special_tokens_map.json", kSpecialTokensMap);
}

// GPT-2's byte-to-symbol map (bytes_to_unicode): printable Latin-1 bytes
// stand for themselves, the others for code points from 256 on. Returns
// the UTF-8 symbol of each byte, in GPT-2's vocabulary order.
std::vector<std::pair<int, std::string>> ByteSymbols() {
  auto utf8 = [](int cp) {
    std::string s;
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
  };
  std::vector<std::pair<int, std::string>> symbols;
  std::vector<bool> printable(256, false);
  for (int b = '!'; b <= '~'; ++b) printable[b] = true;
  for (int b = 0xA1; b <= 0xAC; ++b) printable[b] = true;
  for (int b = 0xAE; b <= 0xFF; ++b) printable[b] = true;
  for (int b = 0; b < 256; ++b) {
    if (printable[b]) symbols.push_back({b, utf8(b)});
  }
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    if (!printable[b]) symbols.push_back({b, utf8(next++)});
  }
  return symbols;
}

// GPT-2's pre-tokenization for this corpus (ASCII letters, digits,
// punctuation and single spaces): " ?letters", " ?digits", " ?other" runs.
std::vector<std::string> PreTokens(const std::string& line) {
  auto kind = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) ? 0 : std::isdigit(c) ? 1 : 2; };
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    const size_t start = i;
    if (line[i] == ' ' && i + 1 < line.size() && line[i + 1] != ' ') ++i;
    if (line[i] == ' ') {
      while (i < line.size() && line[i] == ' ') ++i;
    } else {
      const int k = kind(line[i]);
      while (i < line.size() && line[i] != ' ' && kind(line[i]) == k) ++i;
    }
    words.push_back(line.substr(start, i - start));
  }
  return words;
}

// Byte-level BPE training: the most frequent adjacent pair merged first,
// ties to the smaller pair in code point order (as the golden GPT-2
// tokenizer was trained). Pair counts are kept up to date incrementally;
// the heap holds stale entries, skipped when their count is no longer the
// pair's.
class BpeTrainer {
 public:
  explicit BpeTrainer(const std::unordered_map<std::string, int64_t>& word_counts) {
    const auto bytes = ByteSymbols();
    std::vector<int> symbol_of_byte(256);
    for (const auto& [byte, symbol] : bytes) {
      symbol_of_byte[byte] = static_cast<int>(symbols_.size());
      symbols_.push_back(symbol);
    }
    for (const auto& [word, count] : word_counts) {
      std::vector<int> parts;
      for (unsigned char c : word) parts.push_back(symbol_of_byte[c]);
      words_.push_back(std::move(parts));
      counts_.push_back(count);
    }
    for (size_t w = 0; w < words_.size(); ++w) AddPairs(static_cast<int>(w), +1);
    for (const auto& [key, count] : pair_count_) Push(key);
  }

  // Up to `merges` merges; returns them as pairs of symbols.
  std::vector<std::pair<std::string, std::string>> Train(int merges) {
    std::vector<std::pair<std::string, std::string>> out;
    std::vector<int> seen(words_.size(), -1);
    while (static_cast<int>(out.size()) < merges && !heap_.empty()) {
      const Entry top = heap_.top();
      heap_.pop();
      auto it = pair_count_.find(top.key);
      if (it == pair_count_.end() || it->second != top.count || top.count <= 0) continue;  // Stale.
      const int a = static_cast<int>(top.key >> 32), b = static_cast<int>(top.key & 0xffffffff);
      const int merged = static_cast<int>(symbols_.size());
      symbols_.push_back(symbols_[a] + symbols_[b]);
      out.push_back({symbols_[a], symbols_[b]});
      changed_.clear();
      const std::vector<int> holders = std::move(pair_words_[top.key]);
      pair_words_.erase(top.key);
      for (int w : holders) {
        if (seen[w] == merged) continue;
        seen[w] = merged;
        std::vector<int>& parts = words_[w];
        bool has = false;
        for (size_t i = 0; i + 1 < parts.size() && !has; ++i) has = parts[i] == a && parts[i + 1] == b;
        if (!has) continue;
        AddPairs(w, -1);
        std::vector<int> next;
        for (size_t i = 0; i < parts.size(); ++i) {
          if (i + 1 < parts.size() && parts[i] == a && parts[i + 1] == b) {
            next.push_back(merged);
            ++i;
          } else {
            next.push_back(parts[i]);
          }
        }
        parts = std::move(next);
        AddPairs(w, +1);
      }
      for (uint64_t key : changed_) Push(key);
    }
    return out;
  }

  // Every symbol (bytes first, in GPT-2's order, then each merge's).
  const std::vector<std::string>& symbols() const { return symbols_; }

 private:
  struct Entry {
    int64_t count;
    uint64_t key;
  };
  static uint64_t Key(int a, int b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }

  void AddPairs(int w, int sign) {
    const std::vector<int>& parts = words_[w];
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      const uint64_t key = Key(parts[i], parts[i + 1]);
      pair_count_[key] += sign * counts_[w];
      if (sign > 0) pair_words_[key].push_back(w);
      changed_.insert(key);
    }
  }

  void Push(uint64_t key) {
    const int64_t count = pair_count_[key];
    if (count > 0) heap_.push({count, key});
  }

  // Higher count first; ties: the smaller (left, right) in code point order
  // (UTF-8 byte order is code point order).
  struct Lower {
    const std::vector<std::string>* symbols;
    bool operator()(const Entry& x, const Entry& y) const {
      if (x.count != y.count) return x.count < y.count;
      const auto& s = *symbols;
      const std::string &xl = s[x.key >> 32], &yl = s[y.key >> 32];
      if (xl != yl) return xl > yl;
      return s[x.key & 0xffffffff] > s[y.key & 0xffffffff];
    }
  };

  std::vector<std::string> symbols_;
  std::vector<std::vector<int>> words_;
  std::vector<int64_t> counts_;
  std::unordered_map<uint64_t, int64_t> pair_count_;
  std::unordered_map<uint64_t, std::vector<int>> pair_words_;
  std::unordered_set<uint64_t> changed_;
  std::priority_queue<Entry, std::vector<Entry>, Lower> heap_{Lower{&symbols_}};
};

// The GPT-2 folder: vocab.json ([PAD] [CLS] [SEP] [UNK], the 256 byte
// symbols, each merge's symbol, [MASK] last) and merges.txt, as
// microsoft/deberta-base's tokenizer files are laid out.
void MakeGpt2(const std::vector<std::string>& lines, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::unordered_map<std::string, int64_t> word_counts;
  for (const std::string& line : lines) {
    for (std::string& word : PreTokens(line)) ++word_counts[std::move(word)];
  }
  BpeTrainer trainer(word_counts);
  const auto merges = trainer.Train(kGpt2Merges);
  if (static_cast<int>(merges.size()) < kGpt2Merges) {
    throw std::runtime_error("the corpus gave only " + std::to_string(merges.size()) + " merges");
  }
  nlohmann::ordered_json vocab;
  int id = 0;
  for (const char* special : {"[PAD]", "[CLS]", "[SEP]", "[UNK]"}) vocab[special] = id++;
  for (const std::string& symbol : trainer.symbols()) vocab[symbol] = id++;
  vocab["[MASK]"] = id++;
  WriteFile(dir / "vocab.json", vocab.dump());
  std::string merges_txt = "#version: 0.2\n";
  for (const auto& [left, right] : merges) merges_txt += left + " " + right + "\n";
  WriteFile(dir / "merges.txt", merges_txt);
  WriteFile(dir / "tokenizer_config.json",
            TokenizerConfig("gpt2", "DebertaTokenizer", " \"add_prefix_space\": false,\n \"errors\": \"replace\",\n"));
  WriteFile(dir / "special_tokens_map.json", kSpecialTokensMap);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_bench_tokenizers OUT_DIR\n";
    return 2;
  }
  try {
    const std::filesystem::path out = argv[1];
    std::filesystem::create_directories(out);
    TextMaker maker;
    std::vector<std::string> lines;
    std::string corpus;
    for (int i = 0; i < kCorpusLines; ++i) {
      lines.push_back(maker.Line());
      corpus += lines.back() + "\n";
    }
    WriteFile(out / "corpus.txt", corpus);
    std::cerr << "corpus: " << lines.size() << " lines, " << corpus.size() / (1 << 20) << " MiB\n";
    MakeGpt2(lines, out / "gpt2-50k");
    std::cerr << "wrote " << (out / "gpt2-50k").string() << "\n";
    MakeSentencePiece(out / "corpus.txt", out / "spm-128k");
    std::cerr << "wrote " << (out / "spm-128k").string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "make_bench_tokenizers: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
