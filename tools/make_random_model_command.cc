// deberta-cli make-random-model: a random-weight checkpoint folder of a real
// model size, with the demo tokenizer's files (so it needs the tokenizers).
#include <filesystem>
#include <iostream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "model/demo_model.h"
#include "model/demo_tokenizer.h"
#include "tools/offline_commands.h"

ABSL_DECLARE_FLAG(std::string, out);
ABSL_FLAG(std::string, shape, "deberta-v3-base", "make-random-model: deberta-v3-base or demo");
ABSL_FLAG(std::string, task, "classify",
          "make-random-model: the heads: classify (3-label classifier and fill-mask), token_classification "
          "(Hugging Face's layout, 9 NER labels), authors_ner (the authors' proj + classifier) or rerank "
          "(one label)");

namespace deberta::tools {

int MakeRandomModelCommand() {
  const std::string shape_name = absl::GetFlag(FLAGS_shape), dir = absl::GetFlag(FLAGS_out);
  model::RandomModelShape shape;
  if (shape_name == "deberta-v3-base") {
    shape = model::DebertaV3BaseShape();
  } else if (shape_name == "demo") {
    shape = model::DemoModelShape();
  } else {
    std::cerr << "deberta-cli make-random-model: unknown --shape '" << shape_name
              << "' (deberta-v3-base, demo)\n";
    return 2;
  }
  const std::string task = absl::GetFlag(FLAGS_task);
  if (task == "classify") {
    shape.task = model::RandomModelTask::kClassifyAndFillMask;
  } else if (task == "token_classification") {
    shape.task = model::RandomModelTask::kTokenClassification;
  } else if (task == "authors_ner") {
    shape.task = model::RandomModelTask::kAuthorsNer;
  } else if (task == "rerank") {
    shape.task = model::RandomModelTask::kRerank;
  } else {
    std::cerr << "deberta-cli make-random-model: unknown --task '" << task
              << "' (classify, token_classification, authors_ner, rerank)\n";
    return 2;
  }
  if (dir.empty()) {
    std::cerr << "deberta-cli make-random-model: --out DIR is required\n";
    return 2;
  }
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (absl::Status s = model::WriteRandomCheckpoint(dir, shape); !s.ok()) {
    std::cerr << "deberta-cli make-random-model: " << s << "\n";
    return 1;
  }
  std::cout << "wrote " << shape.name << " (" << task << ") to " << dir << "\n";
  return 0;
}

}  // namespace deberta::tools
