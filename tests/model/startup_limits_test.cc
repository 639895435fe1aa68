// Start-up never aborts on a hostile config.json: sizes beyond any real
// DeBERTa are refused by the parser, and sizes the checkpoint cannot hold
// are refused before the network is allocated (vocab_size 2^31 and 10^12
// once aborted the process).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "model/config.h"
#include "model/demo_model.h"
#include "model/demo_tokenizer.h"
#include "model/engine_factory.h"

namespace deberta::model {
namespace {

using ::testing::HasSubstr;

// The demo model's config.json with `field` set to `value`.
std::string DemoConfigWith(const std::string& field, const std::string& value) {
  return std::regex_replace(DemoConfigJson(), std::regex("\"" + field + "\": *[0-9]+"),
                            "\"" + field + "\": " + value);
}

TEST(StartupLimitsTest, ConfigSizesBeyondAnyRealModelAreRefusedByTheParser) {
  for (const char* value : {"2147483648", "1000000000000"}) {
    auto config = ParseDebertaConfig(DemoConfigWith("vocab_size", value));
    EXPECT_TRUE(absl::IsInvalidArgument(config.status())) << value;
    EXPECT_THAT(config.status().message(), HasSubstr("vocab_size"));
    EXPECT_THAT(config.status().message(), HasSubstr("at most 16777216"));
  }
  auto layers = ParseDebertaConfig(DemoConfigWith("num_hidden_layers", "100000"));
  EXPECT_THAT(layers.status().message(), HasSubstr("num_hidden_layers"));
}

TEST(StartupLimitsTest, ConfigLargerThanTheCheckpointIsRefusedBeforeAllocation) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "startup_limits_demo";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteDemoCheckpoint(dir.string()).ok());
  {
    // Within the parser's limits, but 16 M x 64 weights the demo checkpoint
    // does not have (allocating them would take 4 GiB).
    std::ofstream config(dir / "config.json");
    config << DemoConfigWith("vocab_size", "16000000");
  }
  EngineOptions options;
  options.model = dir.string();
  auto engine = CreateTorchEngine(options);
  EXPECT_TRUE(absl::IsInvalidArgument(engine.status())) << engine.status();
  EXPECT_THAT(engine.status().message(), HasSubstr("config and checkpoint do not match"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace deberta::model
