// The built-in "demo" model: a small DeBERTa-v3-like configuration with
// deterministic pseudo-random weights, so the server, the CLI and the tests
// run with nothing downloaded. Its outputs carry no meaning, and its
// ModelInfo says so. Torch-free: the weights are produced as a safetensors
// buffer that goes through the ordinary checkpoint loader.
//
// The same generator writes random checkpoints of real model sizes
// (deberta-v3-base) for benchmarks: the speed of a model does not depend
// on its weights.
#ifndef DEBERTA_MODEL_DEMO_MODEL_H_
#define DEBERTA_MODEL_DEMO_MODEL_H_

#include <cstdint>
#include <string>

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/tokenizer.h"

namespace deberta::model {

inline constexpr char kDemoModelName[] = "demo";

// Special token ids of the demo model's (imaginary) tokenizer.
inline constexpr int kDemoPadId = 0, kDemoClsId = 1, kDemoSepId = 2, kDemoUnkId = 3,
                     kDemoMaskId = 4;

// The shape of a random DeBERTa-v3-style checkpoint (v2 weight names,
// shared attention keys, log-bucketed relative positions).
struct RandomModelShape {
  std::string name;
  int64_t vocab = 1024, hidden = 64, heads = 4, layers = 2, intermediate = 128;
  int64_t positions = 512, buckets = 32, max_relative_positions = 128;
};
RandomModelShape DemoModelShape();
// deberta-v3-base: vocab 128100, hidden 768, 12 heads, 12 layers, FFN
// 3072, 256 buckets (about 184 M parameters, 740 MB in float32).
RandomModelShape DebertaV3BaseShape();

// config.json text and model.safetensors bytes of a random model of
// `shape`; the same bytes on every machine.
std::string RandomConfigJson(const RandomModelShape& shape);
std::string RandomCheckpointBytes(const RandomModelShape& shape);

// config.json text of the demo model.
std::string DemoConfigJson();

// model.safetensors bytes of the demo model (union checkpoint: backbone,
// sequence classifier and MLM head). The same bytes on every machine.
std::string DemoCheckpointBytes();

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

#endif  // DEBERTA_MODEL_DEMO_MODEL_H_
