// Checkpoint loading: the parameter names equal the checkpoint's, key
// mapping, clear errors for missing keys, wrong shapes and dtypes, and
// the process-wide settings loading relies on (ConfigureRuntime).
#include "model/torch/weights.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "model/demo_model.h"
#include "model/runtime.h"
#include "model/torch/network_loader.h"
#include "tests/testing/golden_case.h"

namespace deberta::model {
namespace {

using ::testing::HasSubstr;

std::string GoldenCaseDir(const std::string& name) { return deberta::testing::GoldenDir() + "/" + name; }

std::unique_ptr<SafetensorsFile> OpenCheckpoint(const std::string& name) {
  return *SafetensorsFile::Open(GoldenCaseDir(name) + "/model.safetensors");
}

// Copies a case's checkpoint into memory with `edit` applied.
std::unique_ptr<SafetensorsFile> EditedCheckpoint(
    const std::string& name, const std::function<void(std::map<std::string, OwnedTensor>&)>& edit) {
  auto file = OpenCheckpoint(name);
  std::map<std::string, OwnedTensor> tensors;
  for (const std::string& key : file->Names()) {
    TensorView v = *file->Get(key);
    tensors[key] = OwnedTensor{v.dtype, v.shape,
                               std::string(reinterpret_cast<const char*>(v.data), v.num_bytes)};
  }
  edit(tensors);
  return *SafetensorsFile::FromBuffer(*SerializeSafetensors(tensors), "edited");
}

DebertaNetwork NetworkFor(const std::string& name, const SafetensorsFile& file) {
  return DebertaNetwork(*LoadDebertaConfig(GoldenCaseDir(name) + "/config.json"), DetectNetworkParts(file, *LoadDebertaConfig(GoldenCaseDir(name) + "/config.json")));
}

class ParameterNamesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ParameterNamesTest, NetworkParametersAreExactlyTheCheckpointKeys) {
  auto file = OpenCheckpoint(GetParam());
  DebertaNetwork network = NetworkFor(GetParam(), *file);
  std::set<std::string> parameters, keys;
  for (const auto& p : network->named_parameters()) parameters.insert(p.key());
  for (const std::string& k : file->Names()) keys.insert(k);
  EXPECT_EQ(parameters, keys);
  auto report = LoadWeights(*file, *network);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->unused_keys.empty());
}

INSTANTIATE_TEST_SUITE_P(AllCases, ParameterNamesTest,
                         ::testing::ValuesIn(deberta::testing::GoldenCaseNames()),
                         [](const auto& info) { return info.param; });

TEST(WeightsTest, MapsKeysWithoutPrefixAndLegacyHead) {
  EXPECT_EQ(NetworkParameterName("encoder.layer.0.output.dense.weight"),
            "deberta.encoder.layer.0.output.dense.weight");
  EXPECT_EQ(NetworkParameterName("deberta.embeddings.LayerNorm.bias"),
            "deberta.embeddings.LayerNorm.bias");
  EXPECT_EQ(NetworkParameterName("cls.predictions.transform.dense.weight"),
            "lm_predictions.lm_head.dense.weight");
  EXPECT_EQ(NetworkParameterName("cls.predictions.bias"), "lm_predictions.lm_head.bias");
  EXPECT_EQ(NetworkParameterName("cls.predictions.decoder.weight"), "");
  EXPECT_EQ(NetworkParameterName("deberta.embeddings.position_ids"), "");
  EXPECT_EQ(NetworkParameterName("mask_predictions.classifier.weight"), "");
}

TEST(WeightsTest, LoadsCheckpointWithoutPrefixAndLogsUnusedKeys) {
  auto file = EditedCheckpoint("b_v3_base_like", [](auto& t) {
    std::map<std::string, OwnedTensor> renamed;
    for (auto& [k, v] : t) {
      renamed[k.rfind("deberta.", 0) == 0 ? k.substr(8) : k] = v;
    }
    renamed["embeddings.position_ids"] = OwnedTensor{TensorDType::kI64, {1}, std::string(8, '\0')};
    t = renamed;
  });
  DebertaNetwork network = NetworkFor("b_v3_base_like", *file);
  auto report = LoadWeights(*file, *network);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->unused_keys, (std::vector<std::string>{"embeddings.position_ids"}));
}

TEST(WeightsTest, HalfPrecisionCheckpointIsUpcast) {
  auto f32 = OpenCheckpoint("c_v2_xlarge_like");
  auto f16 = EditedCheckpoint("c_v2_xlarge_like", [](auto& t) {
    for (auto& [k, v] : t) {
      at::Tensor x = at::from_blob(v.bytes.data(), v.shape, at::kFloat).to(at::kHalf).contiguous();
      v = OwnedTensor{TensorDType::kF16, v.shape,
                      std::string(static_cast<const char*>(x.data_ptr()), x.nbytes())};
    }
  });
  DebertaNetwork a = NetworkFor("c_v2_xlarge_like", *f32), b = NetworkFor("c_v2_xlarge_like", *f16);
  ASSERT_TRUE(LoadWeights(*f32, *a).ok());
  ASSERT_TRUE(LoadWeights(*f16, *b).ok());
  at::Tensor wa = a->deberta->embeddings->word_embeddings->weight;
  at::Tensor wb = b->deberta->embeddings->word_embeddings->weight;
  EXPECT_EQ(wb.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(wa.to(at::kHalf).to(at::kFloat), wb));
}

TEST(WeightsTest, MissingKeysAreAllNamed) {
  auto file = EditedCheckpoint("a_v1_base_like", [](auto& t) {
    t.erase("deberta.encoder.layer.1.attention.self.q_bias");
    t.erase("deberta.encoder.layer.2.output.dense.bias");
  });
  DebertaNetwork network = NetworkFor("a_v1_base_like", *file);
  auto report = LoadWeights(*file, *network);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("missing 2 tensor(s): deberta.encoder.layer.1.attention.self.q_bias, "
                        "deberta.encoder.layer.2.output.dense.bias"));
}

TEST(WeightsTest, WrongShapeIsNamed) {
  auto file = EditedCheckpoint("a_v1_base_like", [](auto& t) {
    t["classifier.weight"] = OwnedTensor{TensorDType::kF32, {2, 48}, std::string(2 * 48 * 4, '\0')};
  });
  DebertaNetwork network = NetworkFor("a_v1_base_like", *file);
  auto report = LoadWeights(*file, *network);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("classifier.weight has shape [2, 48], expected [3, 48]"));
}

TEST(WeightsTest, IntegerWeightIsWrongDType) {
  auto file = EditedCheckpoint("a_v1_base_like", [](auto& t) {
    t["pooler.dense.bias"] = OwnedTensor{TensorDType::kI32, {48}, std::string(48 * 4, '\0')};
  });
  DebertaNetwork network = NetworkFor("a_v1_base_like", *file);
  auto report = LoadWeights(*file, *network);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("pooler.dense.bias: dtype I32 is not a weight dtype"));
}

TEST(NetworkLoaderTest, TruncatedCheckpointFolderIsAnError) {
  const std::string dir = ::testing::TempDir() + "/truncated_model";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(GoldenCaseDir("a_v1_base_like") + "/config.json", dir + "/config.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::ifstream in(GoldenCaseDir("a_v1_base_like") + "/model.safetensors", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(dir + "/model.safetensors", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EngineOptions options;
  options.model = dir;
  auto loaded = LoadNetwork(options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("truncated?"));
}

TEST(NetworkLoaderTest, BadOptionsAreClearErrors) {
  EngineOptions options;
  options.model = "/nonexistent";
  EXPECT_EQ(LoadNetwork(options).status().code(), absl::StatusCode::kNotFound);
  options.model = "demo";
  options.dtype = ComputeDType::kFloat16;
  EXPECT_THAT(std::string(LoadNetwork(options).status().message()), HasSubstr("float16 is only supported on cuda"));
  options.dtype = ComputeDType::kInt8;
  options.device = "cuda:0";
  auto int8_on_cuda = LoadNetwork(options);
  EXPECT_EQ(int8_on_cuda.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(int8_on_cuda.status().message()), HasSubstr("int8 is only supported on the cpu"));
  options.device = "cpu";
  options.dtype = ComputeDType::kFloat32;
  options.device = "tpu";
  EXPECT_EQ(LoadNetwork(options).status().code(), absl::StatusCode::kInvalidArgument);
}

// TF32 and the quantized engine are process-wide: ConfigureRuntime sets
// them once, loading a network leaves them as they are.
TEST(RuntimeTest, Tf32IsOffUnlessAllowedAndLoadingLeavesIt) {
  RuntimeOptions runtime;
  runtime.allow_tf32 = true;
  ConfigureRuntime(runtime);
  EXPECT_TRUE(at::globalContext().allowTF32CuBLAS());
  EXPECT_TRUE(at::globalContext().allowTF32CuDNN());
  ASSERT_TRUE(LoadNetwork(EngineOptions()).ok());
  EXPECT_TRUE(at::globalContext().allowTF32CuBLAS());
  ConfigureRuntime(RuntimeOptions{});
  EXPECT_FALSE(at::globalContext().allowTF32CuBLAS());
  EXPECT_FALSE(at::globalContext().allowTF32CuDNN());
}

TEST(RuntimeTest, Int8IsRefusedWithoutTheQuantizedEngineConfigureRuntimeSelects) {
  const auto& engines = at::globalContext().supportedQEngines();
  if (std::find(engines.begin(), engines.end(), at::QEngine::ONEDNN) == engines.end() ||
      std::find(engines.begin(), engines.end(), at::QEngine::QNNPACK) == engines.end()) {
    GTEST_SKIP() << "needs LibTorch's onednn and qnnpack quantized engines";
  }
  EngineOptions options;
  options.dtype = ComputeDType::kInt8;
  at::globalContext().setQEngine(at::QEngine::QNNPACK);  // As if ConfigureRuntime had not run.
  const absl::Status refused = LoadNetwork(options).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_THAT(std::string(refused.message()), ::testing::HasSubstr("ConfigureRuntime"));
  EXPECT_EQ(at::globalContext().qEngine(), at::QEngine::QNNPACK);  // Loading did not change it.
  ConfigureRuntime(RuntimeOptions{});
  EXPECT_TRUE(LoadNetwork(options).ok());
}

TEST(NetworkLoaderTest, ACudaDeviceWithoutOneIsAClearError) {
  EngineOptions options;
  options.device = "cuda:0";
  const absl::Status status = LoadNetwork(options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  // A CPU-only LibTorch says so; a CUDA one on a machine without a GPU
  // (the CUDA image's test) says no device is visible.
  EXPECT_THAT(std::string(status.message()),
              ::testing::AnyOf(HasSubstr("has no CUDA support"), HasSubstr("no CUDA device is visible")));
}

// docs/deberta-model.md section 9.3, case by case.
TEST(ChooseEmdTest, AutoIsEmdOnlyForTheAuthorsHeadNotReSaved) {
  const EmdEvidence authors{/*has_mlm_head=*/true, /*can_run=*/true, /*legacy_mlm_head=*/false,
                            /*has_legacy_field=*/false};
  EXPECT_EQ(ChooseEmd(EmdMode::kAuto, authors).value(), true);
  EmdEvidence hugging_face_head = authors;
  hugging_face_head.legacy_mlm_head = true;
  EXPECT_EQ(ChooseEmd(EmdMode::kAuto, hugging_face_head).value(), false);
  EmdEvidence re_saved = authors;
  re_saved.has_legacy_field = true;
  EXPECT_EQ(ChooseEmd(EmdMode::kAuto, re_saved).value(), false);
  EmdEvidence cannot = authors;
  cannot.can_run = false;
  EXPECT_EQ(ChooseEmd(EmdMode::kAuto, cannot).value(), false);
  EXPECT_EQ(ChooseEmd(EmdMode::kPlain, authors).value(), false);
  EXPECT_EQ(ChooseEmd(EmdMode::kEmd, re_saved).value(), true);  // Asked for: the rule is not consulted.
}

TEST(ChooseEmdTest, AskingForEmdThatCannotRunIsInvalidArgument) {
  const EmdEvidence cannot{/*has_mlm_head=*/true, /*can_run=*/false, false, false};
  EXPECT_EQ(ChooseEmd(EmdMode::kEmd, cannot).status().code(), absl::StatusCode::kInvalidArgument);
  const EmdEvidence no_head{/*has_mlm_head=*/false, /*can_run=*/true, false, false};
  EXPECT_EQ(ChooseEmd(EmdMode::kEmd, no_head).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ChooseEmd(EmdMode::kAuto, no_head).value(), false);
}

TEST(NetworkLoaderTest, EmdDecisionFollowsTheSpecRule) {
  EngineOptions options;
  options.model = GoldenCaseDir("a_v1_base_like");
  EXPECT_TRUE(LoadNetwork(options)->info.emd_enabled);
  options.emd = EmdMode::kPlain;
  EXPECT_FALSE(LoadNetwork(options)->info.emd_enabled);
  options.model = "demo";
  options.emd = EmdMode::kAuto;
  auto demo = LoadNetwork(options);
  ASSERT_TRUE(demo.ok()) << demo.status();
  EXPECT_TRUE(demo->info.is_demo);
  EXPECT_TRUE(demo->info.emd_enabled);
  EXPECT_TRUE(demo->info.has_classifier);
  EXPECT_THAT(demo->info.description, HasSubstr("random weights"));
}

}  // namespace
}  // namespace deberta::model
