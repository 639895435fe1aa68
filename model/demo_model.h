// The built-in "demo" model: a small DeBERTa-v3-like configuration with
// deterministic pseudo-random weights, so the server, the CLI and the tests
// run with nothing downloaded. Its outputs carry no meaning, and its
// ModelInfo says so. Torch-free: the weights are produced as a safetensors
// buffer that goes through the ordinary checkpoint loader.
//
// The same generator writes random checkpoints of real model sizes
// (deberta-v3-base) for benchmarks: the speed of a model does not depend
// on its weights. The demo tokenizer, and checkpoint folders written with
// its files, are in demo_tokenizer.h.
#ifndef DEBERTA_MODEL_DEMO_MODEL_H_
#define DEBERTA_MODEL_DEMO_MODEL_H_

#include <cstdint>
#include <string>


namespace deberta::model {

inline constexpr char kDemoModelName[] = "demo";

// Special token ids of the demo model's (imaginary) tokenizer.
inline constexpr int kDemoPadId = 0, kDemoClsId = 1, kDemoSepId = 2, kDemoUnkId = 3,
                     kDemoMaskId = 4;

// The heads a random checkpoint carries (docs/tasks.md 1.1 and 2).
enum class RandomModelTask {
  kClassifyAndFillMask,  // A 3-label sequence classifier and the MLM head (the demo model).
  kTokenClassification,  // Hugging Face's token classifier: classifier on the last hidden state, 9 NER labels.
  kAuthorsNer,           // The authors' NER head: proj + GELU + classifier, no `architectures`.
  kRerank,               // A one-label sequence classifier (a cross-encoder).
};

// The shape of a random DeBERTa-v3-style checkpoint (v2 weight names,
// shared attention keys, log-bucketed relative positions).
struct RandomModelShape {
  std::string name;
  int64_t vocab = 1024, hidden = 64, heads = 4, layers = 2, intermediate = 128;
  int64_t positions = 512, buckets = 32, max_relative_positions = 128;
  RandomModelTask task = RandomModelTask::kClassifyAndFillMask;
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

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_DEMO_MODEL_H_
