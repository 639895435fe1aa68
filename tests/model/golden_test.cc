// The model against the authors' reference: every golden case, every
// tensor, at the golden README's tolerance in float32, and within a
// measured tolerance in bfloat16.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "absl/strings/match.h"
#include "model/torch/layers.h"
#include "model/torch/cpu_backend.h"
#include "model/torch/network_loader.h"
#include "model/torch/torch_engine.h"
#include "nlohmann/json.hpp"
#include "tests/testing/golden_case.h"
#include "tests/testing/sha256.h"

namespace deberta::model {
namespace {

using deberta::testing::CompareTensors;
using deberta::testing::GoldenCaseNames;
using deberta::testing::GoldenDir;
using deberta::testing::GoldenExpected;
using deberta::testing::GoldenInputs;
using deberta::testing::ReadGoldenInputs;
using deberta::testing::kBf16ClassifierTolerance;
using deberta::testing::kBf16MlmTolerance;
using deberta::testing::kInt8ClassifierTolerance;
using deberta::testing::kInt8MlmTolerance;

// The golden README's float32 acceptance rule.
constexpr double kAtol = 1e-4, kRtol = 1e-4;
// bfloat16 and int8: kBf16* and kInt8* (golden_case.h).

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(GoldenFilesTest, VendoredFilesMatchCasesJsonSha256) {
  auto cases = nlohmann::json::parse(ReadFile(GoldenDir() + "/cases.json"))["cases"];
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& c : cases) {
    for (const auto& [file, meta] : c["files"].items()) {
      std::string bytes = ReadFile(GoldenDir() + "/" + c["name"].get<std::string>() + "/" + file);
      EXPECT_EQ(bytes.size(), meta["bytes"].get<size_t>()) << c["name"] << "/" << file;
      EXPECT_EQ(deberta::testing::Sha256Hex(bytes), meta["sha256"].get<std::string>())
          << c["name"] << "/" << file;
    }
  }
}

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(deberta::testing::Sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(deberta::testing::Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

LoadedNetwork LoadCase(const std::string& name, ComputeDType dtype) {
  EngineOptions options;
  options.model = GoldenDir() + "/" + name;
  options.dtype = dtype;
  options.num_threads = 2;
  auto loaded = LoadNetwork(options);
  if (!loaded.ok()) throw std::runtime_error(std::string(loaded.status().message()));
  return *std::move(loaded);
}

std::map<std::string, at::Tensor> RunTrace(const LoadedNetwork& loaded, const GoldenInputs& in) {
  c10::InferenceMode guard;
  NetworkInputs inputs{in.input_ids, at::Tensor(), in.attention_mask};
  return loaded.network->Trace(inputs);
}

// Rows of a [B, L, V] tensor at real positions, as [rows, V].
at::Tensor RealRows(const at::Tensor& t, const at::Tensor& mask) {
  return t.index({mask.to(at::kBool)});
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

// Every reference tensor within the golden README's rule, equal argmax.
void ExpectFloat32MatchesEveryReferenceTensor(const std::string& name) {
  GoldenInputs in = ReadGoldenInputs(name);
  GoldenExpected expected(name);
  auto trace = RunTrace(LoadCase(name, ComputeDType::kFloat32), in);

  int checked = 0;
  for (const std::string& tensor : expected.Names()) {
    // Attention probabilities are internal to the layers; the outputs of
    // every layer are checked instead. The at-masked rows are checked
    // through the engine below.
    if (absl::StartsWith(tensor, "attentions.") || tensor == "mlm_logits_emd_at_masked") continue;
    SCOPED_TRACE(name + ": " + tensor);
    ASSERT_TRUE(trace.count(tensor)) << "model did not produce " << tensor;
    at::Tensor want = expected.Get(tensor);
    at::Tensor got = trace[tensor];
    if (want.scalar_type() == at::kLong) {
      EXPECT_TRUE(at::equal(got.to(at::kCPU), want)) << "index table differs";
    } else {
      auto c = CompareTensors(got, want, kAtol, kRtol, in.attention_mask);
      EXPECT_TRUE(c.passes()) << "max abs error " << c.max_abs_error << " over " << c.compared;
    }
    ++checked;
  }
  EXPECT_GE(checked, 15);

  // Equal argmax: classifier rows and MLM logits at every real position.
  EXPECT_TRUE(at::equal(trace["classifier_logits"].argmax(-1),
                        expected.Get("classifier_logits").argmax(-1)));
  for (const char* logits : {"mlm_logits_emd", "mlm_logits_no_emd"}) {
    EXPECT_TRUE(at::equal(RealRows(trace[logits], in.attention_mask).argmax(-1),
                          RealRows(expected.Get(logits), in.attention_mask).argmax(-1)))
        << logits;
  }
}

TEST_P(GoldenTest, Float32MatchesEveryReferenceTensor) { ExpectFloat32MatchesEveryReferenceTensor(GetParam()); }

// The serving path: the engine pads the unpadded rows itself, computes the
// LM head only at the mask positions, and returns probabilities.
// With `buckets`, the batch runs padded to the first (asserted), from a
// recorded graph with `graphs`.
void ExpectEngineAnswersMatchReference(const std::string& name, const std::vector<BatchShape>& buckets = {},
                                       bool graphs = false) {
  GoldenInputs in = ReadGoldenInputs(name);
  GoldenExpected expected(name);
  EngineOptions options;
  options.model = GoldenDir() + "/" + name;
  options.num_threads = 2;
  options.buckets = buckets;
  options.device_graphs = graphs;
  auto engine = TorchEngine::Create(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  ASSERT_TRUE((*engine)->InitializeThread().ok());
  EXPECT_EQ((*engine)->recorded_graphs(), graphs ? buckets.size() : 0u);
  EXPECT_TRUE((*engine)->info().emd_enabled);
  const int64_t longest = *std::max_element(in.lengths.begin(), in.lengths.end());
  const BatchShape natural{static_cast<int64_t>(in.lengths.size()), longest};
  EXPECT_EQ((*engine)->PaddedShape(natural), buckets.empty() ? natural : buckets[0]);

  std::vector<Sequence> sequences(in.lengths.size());
  std::vector<MaskedSequence> masked(in.lengths.size());
  for (size_t b = 0; b < sequences.size(); ++b) {
    for (int64_t t = 0; t < in.lengths[b]; ++t) {
      sequences[b].token_ids.push_back(static_cast<int32_t>(in.input_ids[b][t].item<int64_t>()));
    }
    masked[b].sequence = sequences[b];
    masked[b].top_k = 3;
  }
  for (auto [row, pos] : in.masked_positions) masked[row].positions.push_back(pos);
  // Rows without a mask are not fill-mask inputs.
  std::vector<MaskedSequence> fill_inputs;
  std::vector<size_t> fill_rows;
  for (size_t b = 0; b < masked.size(); ++b) {
    if (!masked[b].positions.empty()) {
      fill_inputs.push_back(masked[b]);
      fill_rows.push_back(b);
    }
  }

  auto classified = (*engine)->Classify(sequences);
  ASSERT_TRUE(classified.ok()) << classified.status();
  at::Tensor want_logits = expected.Get("classifier_logits");
  at::Tensor want_probs = at::softmax(want_logits, -1);
  for (size_t b = 0; b < sequences.size(); ++b) {
    for (int64_t k = 0; k < want_logits.size(1); ++k) {
      EXPECT_NEAR((*classified)[b].logits[k], want_logits[b][k].item<float>(),
                  kAtol + kRtol * std::abs(want_logits[b][k].item<float>()));
      EXPECT_NEAR((*classified)[b].probabilities[k], want_probs[b][k].item<float>(), 1e-4);
    }
  }

  auto filled = (*engine)->FillMask(fill_inputs);
  ASSERT_TRUE(filled.ok()) << filled.status();
  at::Tensor at_masked = expected.Get("mlm_logits_emd_at_masked");
  at::Tensor want_mlm = at::softmax(at_masked, -1);
  size_t m = 0;  // Row of at_masked, in masked_positions order (row-major).
  for (size_t i = 0; i < fill_inputs.size(); ++i) {
    const auto& predictions = (*filled)[i].predictions;
    ASSERT_EQ(predictions.size(), fill_inputs[i].positions.size());
    for (const MaskPrediction& p : predictions) {
      auto [prob, id] = want_mlm[m].topk(3);
      ASSERT_EQ(p.candidates.size(), 3u);
      EXPECT_EQ(p.candidates[0].token_id, id[0].item<int64_t>()) << "row " << fill_rows[i];
      for (int c = 0; c < 3; ++c) {
        EXPECT_NEAR(p.candidates[c].probability,
                    want_mlm[m][p.candidates[c].token_id].item<float>(), 1e-5);
      }
      ++m;
    }
  }
  EXPECT_EQ(m, in.masked_positions.size());
}

TEST_P(GoldenTest, EngineAnswersMatchReference) { ExpectEngineAnswersMatchReference(GetParam()); }

// Padding up to a bucket (more rows, more tokens, all masked) changes no
// answer, eagerly and through the recorded static-buffer path (on the CPU
// the "graph" reruns its work on the recorded tensors; on CUDA it is a CUDA
// graph). Golden batches are at most 4 x 20 here; a smaller bucket that
// cannot hold them is never chosen.
TEST_P(GoldenTest, EngineAnswersMatchReferenceWhenPaddedToABucket) {
  const std::vector<BatchShape> buckets{{6, 40}, {1, 8}, {64, 64}};
  SCOPED_TRACE("eager");
  ExpectEngineAnswersMatchReference(GetParam(), buckets, /*graphs=*/false);
}

TEST_P(GoldenTest, EngineAnswersMatchReferenceFromARecordedBucketGraph) {
  ExpectEngineAnswersMatchReference(GetParam(), {{6, 40}, {1, 8}}, /*graphs=*/true);
}

// The three logits of a golden case in a reduced-precision dtype: within
// `classifier` / `mlm` of the reference, and the same argmax wherever the
// reference's top two differ by more than twice the bound (near-ties
// cannot be asked of bfloat16 or int8). Largest errors are recorded as
// test properties `<tag>_max_error_<logits>`.
void ExpectLogitsWithin(const std::string& name, ComputeDType dtype, double classifier, double mlm,
                        const std::string& tag) {
  GoldenInputs in = ReadGoldenInputs(name);
  GoldenExpected expected(name);
  auto trace = RunTrace(LoadCase(name, dtype), in);
  for (const std::string logits : {"classifier_logits", "mlm_logits_emd", "mlm_logits_no_emd"}) {
    SCOPED_TRACE(name + ": " + logits);
    const double tolerance = logits == "classifier_logits" ? classifier : mlm;
    at::Tensor want = expected.Get(logits), got = trace[logits].to(at::kFloat);
    if (want.dim() == 3) {
      want = RealRows(want, in.attention_mask);
      got = RealRows(got, in.attention_mask);
    }
    double max_error = (got - want).abs().max().item<double>();
    ::testing::Test::RecordProperty(tag + "_max_error_" + logits, std::to_string(max_error));
    EXPECT_LE(max_error, tolerance);
    auto [top2, top2_ids] = want.topk(2, -1);
    at::Tensor decisive = (top2.select(-1, 0) - top2.select(-1, 1)) > 2 * tolerance;
    at::Tensor same = got.argmax(-1) == want.argmax(-1);
    EXPECT_TRUE(same.index({decisive}).all().item<bool>());
    if (logits != "classifier_logits") {
      EXPECT_GT(decisive.sum().item<int64_t>(), 10);
    }
  }
}

TEST_P(GoldenTest, BFloat16LogitsWithinMeasuredTolerance) {
  ExpectLogitsWithin(GetParam(), ComputeDType::kBFloat16, kBf16ClassifierTolerance, kBf16MlmTolerance, "bf16");
}

TEST_P(GoldenTest, Int8LogitsWithinMeasuredTolerance) {
  ExpectLogitsWithin(GetParam(), ComputeDType::kInt8, kInt8ClassifierTolerance, kInt8MlmTolerance, "int8");
}

// After loading, the linear layers hold one copy of their weights, in the
// compute dtype: no float32 values beside the bfloat16 ones, and the
// projections folded into the fused [q;k;v] weight and the position tables
// are emptied. (Correctness in both dtypes: the golden tests above.)
TEST_P(GoldenTest, LinearLayersKeepOneCopyInTheComputeDType) {
  const std::string name = GetParam();
  for (ComputeDType dtype : {ComputeDType::kFloat32, ComputeDType::kBFloat16}) {
    SCOPED_TRACE(name + (dtype == ComputeDType::kFloat32 ? " float32" : " bfloat16"));
    LoadedNetwork loaded = LoadCase(name, dtype);
    // bfloat16 runs as float32 where the CPU has no bfloat16 kernels.
    const at::ScalarType want =
        dtype == ComputeDType::kFloat32 || CpuKernels().bfloat16_as_float32 ? at::kFloat : at::kBFloat16;
    // Where the CPU backend packs the dtype (oneDNN has blocked kernels for
    // it), the linear layers' one copy is the packed one.
    const bool packs = CpuKernels().PacksLinear(want);
    int kept = 0, packed = 0, released = 0;
    for (const auto& item : loaded.network->named_modules()) {
      auto* dense = dynamic_cast<DenseImpl*>(item.value().get());
      if (dense == nullptr) continue;
      if (dense->packed()) {
        ++packed;
        EXPECT_EQ(dense->weight.numel(), 0) << item.key();  // No plain copy besides the packed one.
        continue;
      }
      if (dense->weight.numel() == 0) {
        ++released;
        EXPECT_NE(item.key().find("attention.self."), std::string::npos) << item.key();
        continue;
      }
      ++kept;
      // Pack's own check may refuse a narrow layer (oneDNN 3.7, float32:
      // outputs not a multiple of 64); a wide one always packs.
      EXPECT_FALSE(packs && dense->weight.size(0) % 64 == 0) << item.key() << " kept unpacked";
      EXPECT_EQ(dense->weight.scalar_type(), want) << item.key();
      if (dense->bias.defined()) {
        EXPECT_EQ(dense->bias.scalar_type(), want) << item.key();
      }
    }
    // Per layer: output, FFN up and down stay (packed or not); q/k/v (or
    // in_proj) and the position projections go.
    EXPECT_GE(kept + packed, 3 * loaded.config.num_hidden_layers);
    if (packs && loaded.config.hidden_size % 64 == 0) {
      EXPECT_GE(packed, 3 * loaded.config.num_hidden_layers);
    }
    EXPECT_GE(released, loaded.config.num_hidden_layers);
  }
}

// `deberta-cli run --outputs` computes only what it is asked for: a trace
// for some names holds those and what they are made of, nothing else (no
// LM head for the classifier, no EMD for the plain logits, not every layer),
// with the values of the full trace; TraceNames lists the full trace's keys.
TEST_P(GoldenTest, TraceComputesOnlyTheNamedOutputs) {
  const std::string name = GetParam();
  GoldenInputs in = ReadGoldenInputs(name);
  LoadedNetwork loaded = LoadCase(name, ComputeDType::kFloat32);
  std::map<std::string, at::Tensor> full = RunTrace(loaded, in);
  std::set<std::string> full_names;
  for (const auto& [key, tensor] : full) full_names.insert(key);
  EXPECT_EQ(loaded.network->TraceNames(), full_names);

  const auto keys_of = [&](const std::set<std::string>& wanted) {
    c10::InferenceMode guard;
    NetworkInputs inputs{in.input_ids, at::Tensor(), in.attention_mask};
    std::map<std::string, at::Tensor> trace = loaded.network->Trace(inputs, &wanted);
    std::set<std::string> keys;
    for (const auto& [key, tensor] : trace) {
      keys.insert(key);
      EXPECT_TRUE(at::allclose(tensor, full.at(key), 1e-6, 1e-6)) << name << ": " << key;
    }
    return keys;
  };
  using Names = std::set<std::string>;
  if (full.count("classifier_logits")) {
    EXPECT_EQ(keys_of({"classifier_logits"}), (Names{"pooled_output", "classifier_logits"}));
  }
  EXPECT_EQ(keys_of({"mlm_logits_no_emd"}), Names{"mlm_logits_no_emd"});
  EXPECT_EQ(keys_of({"mlm_logits_emd"}), (Names{"emd_z_states", "emd_query_init", "emd_hidden_states.1",
                                                "emd_hidden_states.2", "emd_final", "mlm_logits_emd"}));
  Names layers = keys_of({"hidden_states.1"});
  EXPECT_TRUE(layers.count("hidden_states.0") && layers.count("hidden_states.1"));
  EXPECT_FALSE(layers.count("classifier_logits") || layers.count("mlm_logits_no_emd"));
}

INSTANTIATE_TEST_SUITE_P(AllCases, GoldenTest, ::testing::ValuesIn(GoldenCaseNames()),
                         [](const auto& info) { return info.param; });

// The same cases in every dtype under each other mode of the CPU backend
// (GoldenTest runs kAuto): the portable kernels and LibTorch's ops run on
// any CPU, so every host checks them; kUnpacked and kNoVnni run where they
// differ from kAuto here (oneDNN has packed kernels; the CPU has VNNI), as
// the backend says.
class GoldenCpuKernelsTest : public ::testing::TestWithParam<std::tuple<std::string, CpuKernelMode>> {
 protected:
  void SetUp() override {
    const CpuKernelMode mode = std::get<1>(GetParam());
    const std::vector<CpuKernelMode> distinct = DistinctCpuKernelModes();
    if (std::find(distinct.begin(), distinct.end(), mode) == distinct.end()) {
      GTEST_SKIP() << CpuKernelModeName(mode) << " is kAuto's choice on this host";
    }
    forced_.emplace(mode);
    ::testing::Test::RecordProperty("cpu_kernels", CpuKernels().Describe());
  }
  std::optional<ScopedCpuKernelMode> forced_;
};

TEST_P(GoldenCpuKernelsTest, Float32MatchesEveryReferenceTensor) {
  ExpectFloat32MatchesEveryReferenceTensor(std::get<0>(GetParam()));
}

TEST_P(GoldenCpuKernelsTest, BFloat16LogitsWithinMeasuredTolerance) {
  ExpectLogitsWithin(std::get<0>(GetParam()), ComputeDType::kBFloat16, kBf16ClassifierTolerance, kBf16MlmTolerance,
                     "bf16");
}

TEST_P(GoldenCpuKernelsTest, Int8LogitsWithinMeasuredTolerance) {
  ExpectLogitsWithin(std::get<0>(GetParam()), ComputeDType::kInt8, kInt8ClassifierTolerance, kInt8MlmTolerance,
                     "int8");
}

INSTANTIATE_TEST_SUITE_P(AllCases, GoldenCpuKernelsTest,
                         ::testing::Combine(::testing::ValuesIn(GoldenCaseNames()),
                                            ::testing::Values(CpuKernelMode::kPortable, CpuKernelMode::kUnpacked,
                                                              CpuKernelMode::kNoVnni, CpuKernelMode::kLibTorch)),
                         [](const auto& info) {
                           std::string mode = CpuKernelModeName(std::get<1>(info.param));
                           std::replace(mode.begin(), mode.end(), '-', '_');
                           return std::get<0>(info.param) + "_" + mode;
                         });

}  // namespace
}  // namespace deberta::model
