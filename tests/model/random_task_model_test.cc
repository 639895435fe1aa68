// make-random-model's task checkpoints (model/demo_model.h) load as the
// models they stand for: the token classifiers of both layouts of
// docs/tasks.md 1.1 (Hugging Face's, and the authors' proj + classifier)
// with CoNLL's labels and no sequence head, and the reranker as a
// one-label sequence classifier; each answers its own engine call.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "model/demo_model.h"
#include "model/demo_tokenizer.h"
#include "model/engine_factory.h"

namespace deberta::model {
namespace {

using ::testing::ElementsAre;

std::unique_ptr<Engine> RandomTaskEngine(RandomModelTask task, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / ("random_task_" + name);
  std::filesystem::create_directories(dir);
  RandomModelShape shape = DemoModelShape();
  shape.task = task;
  EXPECT_TRUE(WriteRandomCheckpoint(dir.string(), shape).ok());
  EngineOptions options;
  options.model = dir.string();
  auto engine = CreateTorchEngine(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  std::filesystem::remove_all(dir);
  return engine.ok() ? *std::move(engine) : nullptr;
}

Sequence Ids(std::vector<int32_t> ids) {
  Sequence sequence;
  sequence.token_ids = std::move(ids);
  return sequence;
}

TEST(RandomTaskModelTest, TokenClassifiersOfBothLayoutsLabelEveryPosition) {
  for (auto [task, name] : {std::pair{RandomModelTask::kTokenClassification, "token_classification"},
                            std::pair{RandomModelTask::kAuthorsNer, "authors_ner"}}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Engine> engine = RandomTaskEngine(task, name);
    ASSERT_NE(engine, nullptr);
    const ModelInfo& info = engine->info();
    EXPECT_TRUE(info.has_token_classifier);
    EXPECT_FALSE(info.has_classifier);
    EXPECT_FALSE(info.has_mlm_head);
    EXPECT_THAT(info.labels, ElementsAre("O", "B-MISC", "I-MISC", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC",
                                         "I-LOC"));
    auto outputs = engine->ClassifyTokens({Ids({1, 17, 42, 9, 2})}, Engine::RowsWanted());
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    ASSERT_EQ(outputs->size(), 1u);
    EXPECT_EQ((*outputs)[0].num_labels, 9);
    EXPECT_EQ((*outputs)[0].logits.size(), 5u * 9u);
  }
}

TEST(RandomTaskModelTest, ARerankerIsAOneLabelSequenceClassifier) {
  std::unique_ptr<Engine> engine = RandomTaskEngine(RandomModelTask::kRerank, "rerank");
  ASSERT_NE(engine, nullptr);
  EXPECT_TRUE(engine->info().has_classifier);
  EXPECT_FALSE(engine->info().has_token_classifier);
  EXPECT_THAT(engine->info().labels, ElementsAre("LABEL_0"));
  auto outputs = engine->Classify({Ids({1, 17, 2, 42, 9, 2})}, Engine::RowsWanted());
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_EQ((*outputs)[0].logits.size(), 1u);
}

}  // namespace
}  // namespace deberta::model
