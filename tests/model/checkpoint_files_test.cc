// Checkpoint formats (tests/fixtures/checkpoints, made by
// make_bin_checkpoints.py from the golden case b_v3_base_like): a .bin, a
// sharded .bin and sharded safetensors load the same weights, bit for bit,
// and the same model; the legacy pickle format is refused with advice; a
// .bin whose pickle would run code is refused without running it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "model/checkpoint_files.h"
#include "model/engine_factory.h"
#include "tests/testing/golden_case.h"

namespace deberta::model {
namespace {

using ::testing::HasSubstr;

std::string Fixture(const std::string& name) { return std::string(DEBERTA_FIXTURES_DIR) + "/checkpoints/" + name; }
std::string Golden() { return testing::GoldenDir() + "/b_v3_base_like"; }

class CheckpointFormatTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CheckpointFormatTest, SameTensorsAsTheSafetensorsFile) {
  auto want = SafetensorsFile::Open(Golden() + "/model.safetensors");
  auto got = OpenCheckpointWeights(Fixture(GetParam()));
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ((*got)->Names(), (*want)->Names());
  for (const std::string& name : (*want)->Names()) {
    auto a = (*want)->Get(name), b = (*got)->Get(name);
    ASSERT_TRUE(a.ok() && b.ok()) << name;
    EXPECT_EQ(a->dtype, b->dtype) << name;
    EXPECT_EQ(a->shape, b->shape) << name;
    ASSERT_EQ(a->num_bytes, b->num_bytes) << name;
    EXPECT_EQ(std::memcmp(a->data, b->data, a->num_bytes), 0) << name;
  }
}

TEST_P(CheckpointFormatTest, ServesTheSameModel) {
  EngineOptions options;
  options.num_threads = 1;
  options.model = Golden();
  auto reference = CreateTorchEngine(options);
  options.model = Fixture(GetParam());
  auto engine = CreateTorchEngine(options);
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_TRUE(engine.ok()) << engine.status();
  const std::vector<Sequence> batch{{{1, 17, 42, 99, 2}, {}}, {{1, 5, 2}, {}}};
  auto want = (*reference)->Classify(batch);
  auto got = (*engine)->Classify(batch);
  ASSERT_TRUE(want.ok() && got.ok());
  for (size_t i = 0; i < batch.size(); ++i) EXPECT_EQ((*got)[i].logits, (*want)[i].logits);
}

INSTANTIATE_TEST_SUITE_P(Formats, CheckpointFormatTest,
                         ::testing::Values("single_bin", "sharded_bin", "sharded_safetensors"));

TEST(CheckpointFilesTest, LegacyPickleFormatIsRefusedWithAdvice) {
  auto weights = OpenCheckpointWeights(Fixture("legacy_bin"));
  EXPECT_TRUE(absl::IsInvalidArgument(weights.status())) << weights.status();
  EXPECT_THAT(weights.status().message(), HasSubstr("legacy pickle format"));
}

TEST(CheckpointFilesTest, APickleThatWouldRunCodeIsRefusedWithoutRunningIt) {
  const char* marker = "/tmp/deberta_serve_checkpoint_ran_code";
  std::filesystem::remove(marker);
  auto weights = OpenCheckpointWeights(Fixture("code_bin"));
  EXPECT_TRUE(absl::IsInvalidArgument(weights.status())) << weights.status();
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(CheckpointFilesTest, AFolderWithoutWeightsNamesTheFilesLookedFor) {
  auto weights = OpenCheckpointWeights(::testing::TempDir());
  EXPECT_TRUE(absl::IsNotFound(weights.status()));
  EXPECT_THAT(weights.status().message(), HasSubstr("pytorch_model.bin"));
}

}  // namespace
}  // namespace deberta::model
