// The demo model's tokenizer and the checkpoint folders written with its
// files (model/demo_tokenizer.cc); the network itself is in demo_model.h.
// Needs the tokenizers (built unless -DDEBERTA_WITH_TOKENIZERS=OFF).
#ifndef DEBERTA_MODEL_DEMO_TOKENIZER_H_
#define DEBERTA_MODEL_DEMO_TOKENIZER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/demo_model.h"
#include "model/tokenizer.h"

namespace deberta::model {

// The demo model's tokenizer, so that text works out of the box: GPT-2
// byte-level BPE over its 1024 ids ([PAD] [CLS] [SEP] [UNK] [MASK] = 0-4,
// the 256 bytes, then merges learned from a built-in English text, most
// frequent pair first). The same files on every machine.
struct DemoTokenizerFiles {
  std::string vocab_json;
  std::string merges_txt;
};
const DemoTokenizerFiles& GetDemoTokenizerFiles();
absl::StatusOr<std::unique_ptr<Tokenizer>> DemoTokenizer();

// Writes config.json, model.safetensors and the tokenizer files
// (tokenizer_config.json, vocab.json, merges.txt) into `dir` (which must
// exist), making a checkpoint folder of the demo model.
absl::Status WriteDemoCheckpoint(const std::string& dir);

// Writes a checkpoint folder of `shape` with random weights and the demo
// model's tokenizer files (its special ids are the demo's; the vocabulary
// files only when `shape.vocab` holds the demo tokenizer's ids).
absl::Status WriteRandomCheckpoint(const std::string& dir, const RandomModelShape& shape);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_DEMO_TOKENIZER_H_
