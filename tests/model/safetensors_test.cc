// The safetensors reader on good and damaged files: every damage is a
// DataLoss status naming the problem, never a crash or an out-of-bounds read.
#include "model/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "tests/testing/golden_case.h"

namespace deberta::model {
namespace {

using ::testing::HasSubstr;

std::string TwoTensorFile() {
  OwnedTensor a{TensorDType::kF32, {2, 3}, std::string(24, '\1')};
  OwnedTensor b{TensorDType::kBF16, {4}, std::string(8, '\2')};
  return *SerializeSafetensors({{"a", a}, {"b", b}}, {{"k", "v"}});
}

std::string WithHeader(const std::string& header, size_t data_bytes) {
  std::string out(8, '\0');
  uint64_t len = header.size();
  std::memcpy(out.data(), &len, 8);
  return out + header + std::string(data_bytes, '\0');
}

TEST(SafetensorsTest, RoundTrip) {
  auto file = SafetensorsFile::FromBuffer(TwoTensorFile(), "mem");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->Names(), (std::vector<std::string>{"a", "b"}));
  auto a = (*file)->Get("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a->num_bytes, 24u);
  EXPECT_EQ(a->data[0], 1);
  EXPECT_EQ((*file)->Get("b")->dtype, TensorDType::kBF16);
  EXPECT_EQ((*file)->metadata().at("k"), "v");
  EXPECT_EQ((*file)->Get("zzz").status().code(), absl::StatusCode::kNotFound);
}

TEST(SafetensorsTest, OpensGoldenCheckpointMapped) {
  auto file = SafetensorsFile::Open(deberta::testing::GoldenDir() + "/a_v1_base_like/model.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  auto word = (*file)->Get("deberta.embeddings.word_embeddings.weight");
  ASSERT_TRUE(word.ok());
  EXPECT_EQ(word->shape, (std::vector<int64_t>{211, 48}));
}

TEST(SafetensorsTest, MissingFileIsNotFound) {
  auto file = SafetensorsFile::Open("/nonexistent/model.safetensors");
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
}

struct Damage {
  std::string name;
  std::string bytes;
  std::string message;
};

class DamagedFileTest : public ::testing::TestWithParam<Damage> {};

TEST_P(DamagedFileTest, IsDataLossWithReason) {
  auto file = SafetensorsFile::FromBuffer(GetParam().bytes, "damaged");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(file.status().message()), HasSubstr(GetParam().message));
}

std::vector<Damage> Damages() {
  std::string good = TwoTensorFile();
  return {
      {"Empty", "", "fewer than the 8-byte header length"},
      {"TruncatedData", good.substr(0, good.size() - 5), "outside the"},
      {"TruncatedHeader", good.substr(0, 20), "runs past the end of the file"},
      {"HugeHeaderLength", std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}", "exceeds"},
      {"HeaderNotJson", WithHeader("{not json", 0), "header is not a JSON object"},
      {"UnknownDType",
       WithHeader(R"({"t": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}})", 8),
       "unsupported dtype 'F64'"},
      {"SizeDisagreesWithShape",
       WithHeader(R"({"t": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8),
       "holds 8 bytes but dtype F32 and its shape need 12"},
      {"OffsetsReversed",
       WithHeader(R"({"t": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", 8),
       "outside the"},
      {"NegativeDim",
       WithHeader(R"({"t": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 8),
       "non-negative"},
      {"MissingOffsets", WithHeader(R"({"t": {"dtype": "F32", "shape": [1]}})", 4),
       "data_offsets must be"},
  };
}

INSTANTIATE_TEST_SUITE_P(Table, DamagedFileTest, ::testing::ValuesIn(Damages()),
                         [](const auto& info) { return info.param.name; });

TEST(SafetensorsTest, EveryTruncationOfARealFileIsAnErrorNotACrash) {
  std::string good = TwoTensorFile();
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(SafetensorsFile::FromBuffer(good.substr(0, n), "cut").ok()) << n;
  }
}

}  // namespace
}  // namespace deberta::model
