// `deberta-cli convert`: a .bin checkpoint folder gains a model.safetensors
// holding the same tensors, which then loads without LibTorch's unpickler.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "model/safetensors.h"
#include "tests/testing/golden_case.h"

namespace deberta::testing {
namespace {

TEST(ConvertTest, WritesModelSafetensorsWithTheSameTensors) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "convert_sharded_bin";
  fs::remove_all(dir);
  fs::copy(fs::path(DEBERTA_FIXTURES_DIR) / "checkpoints" / "sharded_bin", dir);
  const std::string command = absl::StrCat(DEBERTA_CLI_BINARY, " convert --model=", dir.string());
  ASSERT_EQ(std::system(command.c_str()), 0);
  auto got = model::SafetensorsFile::Open((dir / "model.safetensors").string());
  auto want = model::SafetensorsFile::Open(GoldenDir() + "/b_v3_base_like/model.safetensors");
  ASSERT_TRUE(got.ok() && want.ok());
  ASSERT_EQ((*got)->Names(), (*want)->Names());
  for (const std::string& name : (*want)->Names()) {
    auto a = (*want)->Get(name), b = (*got)->Get(name);
    ASSERT_EQ(a->num_bytes, b->num_bytes) << name;
    EXPECT_EQ(std::memcmp(a->data, b->data, a->num_bytes), 0) << name;
  }
  // A second run refuses to overwrite.
  EXPECT_NE(std::system(command.c_str()), 0);
}

}  // namespace
}  // namespace deberta::testing
