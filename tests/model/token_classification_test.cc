// TorchEngine's token classification against the golden task cases
// (tests/golden_tasks, logits of the authors' reference): both heads of
// docs/tasks.md 1.1 (Hugging Face's classifier, named by config.json's
// architectures; the authors' proj + GELU + classifier, told by its
// tensors), every text of a case in one padded batch, and the windows of
// the long case; logits at every position within 1e-4 + 1e-4|x|. A
// sequence classifier is not taken for a token classifier.
#include <gtest/gtest.h>

#include <fstream>

#include "model/torch/torch_engine.h"
#include "nlohmann/json.hpp"

namespace deberta::model {
namespace {

using json = nlohmann::json;

std::string CaseDir(const std::string& name) { return std::string(DEBERTA_GOLDEN_TASKS_DIR) + "/" + name; }

json ReadCase(const std::string& name) {
  std::ifstream in(CaseDir(name) + "/expected.json");
  EXPECT_TRUE(in) << name;
  return json::parse(in);
}

std::unique_ptr<TorchEngine> EngineFor(const std::string& name) {
  EngineOptions options;
  options.model = CaseDir(name);
  options.num_threads = 2;
  auto engine = TorchEngine::Create(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? *std::move(engine) : nullptr;
}

// Runs every (input_ids, logits) pair in one batch and compares.
void ExpectLogits(TorchEngine& engine, const std::vector<const json*>& inputs) {
  std::vector<Sequence> batch;
  for (const json* input : inputs) batch.push_back({(*input)["input_ids"].get<std::vector<int32_t>>(), {}});
  absl::StatusOr<std::vector<TokenClassifyOutput>> outputs = engine.ClassifyTokens(batch);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const json& want = (*inputs[i])["logits"];
    const TokenClassifyOutput& got = (*outputs)[i];
    ASSERT_EQ(got.logits.size(), want.size() * got.num_labels) << "sequence " << i;
    for (size_t p = 0; p < want.size(); ++p) {
      for (int32_t l = 0; l < got.num_labels; ++l) {
        const double w = want[p][l].get<double>();
        EXPECT_NEAR(got.logits[p * got.num_labels + l], w, 1e-4 + 1e-4 * std::abs(w))
            << "sequence " << i << " position " << p << " label " << l;
      }
    }
  }
}

void CheckCase(const std::string& name) {
  std::unique_ptr<TorchEngine> engine = EngineFor(name);
  ASSERT_NE(engine, nullptr);
  EXPECT_TRUE(engine->info().has_token_classifier);
  EXPECT_FALSE(engine->info().has_classifier);
  const json c = ReadCase(name);
  EXPECT_EQ(engine->info().labels, c["labels"].get<std::vector<std::string>>());
  std::vector<const json*> inputs;
  for (const json& text : c["texts"]) {
    if (text.contains("windows")) {
      for (const json& window : text["windows"]) inputs.push_back(&window);
    } else {
      inputs.push_back(&text);
    }
  }
  ExpectLogits(*engine, inputs);
}

TEST(TokenClassificationTest, HuggingFaceHeadMatchesTheReference) { CheckCase("tc_hf_spm"); }
TEST(TokenClassificationTest, AuthorsNerHeadMatchesTheReference) { CheckCase("tc_authors_gpt2"); }
TEST(TokenClassificationTest, WindowsOfALongTextMatchTheReference) { CheckCase("long_tc_spm"); }

TEST(TokenClassificationTest, ASequenceClassifierHasNoTokenHead) {
  std::unique_ptr<TorchEngine> engine = EngineFor("rerank_spm");
  ASSERT_NE(engine, nullptr);
  EXPECT_TRUE(engine->info().has_classifier);
  EXPECT_FALSE(engine->info().has_token_classifier);
  const std::vector<Sequence> batch{{{1, 5, 2}, {}}};
  EXPECT_EQ(engine->ClassifyTokens(batch).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace deberta::model
