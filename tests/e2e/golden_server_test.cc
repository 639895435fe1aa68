// End-to-end over loopback with the golden models: classification and
// fill-mask answers over gRPC equal the reference implementation's values
// (tests/golden, same tolerance as the model tests).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "model/engine_factory.h"
#include "tests/testing/test_server.h"
#include "tests/testing/golden_case.h"

namespace deberta::testing {
namespace {

namespace pb = serving::v1;

constexpr double kAtol = 1e-4;  // The golden README's acceptance rule.
constexpr double kRtol = 1e-4;

class GoldenServerTest : public ::testing::TestWithParam<std::string> {};

// A server on the golden case's model in `dtype`.
std::unique_ptr<TestServer> ServeCase(const std::string& name, model::ComputeDType dtype,
                                      const service::ServerConfig& config) {
  model::EngineOptions options;
  options.model = GoldenDir() + "/" + name;
  options.num_threads = 2;
  options.dtype = dtype;
  auto engine = model::CreateTorchEngine(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return nullptr;
  auto server = StartTestServer(*std::move(engine), config);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

// Every row of the case as one sequence, at its own length.
pb::ClassifyRequest EveryRow(const GoldenInputs& in) {
  pb::ClassifyRequest classify;
  for (size_t b = 0; b < in.lengths.size(); ++b) {
    pb::Sequence* sequence = classify.add_sequences();
    for (int64_t t = 0; t < in.lengths[b]; ++t) {
      sequence->add_token_ids(static_cast<int32_t>(in.input_ids[b][t].item<int64_t>()));
    }
  }
  return classify;
}

// Each answer's logits within atol + rtol |reference| of the reference's.
void ExpectLogitsNear(const pb::ClassifyResponse& classified, const at::Tensor& logits, double atol, double rtol,
                      const std::string& name) {
  ASSERT_EQ(classified.results_size(), logits.size(0));
  for (int b = 0; b < classified.results_size(); ++b) {
    for (int k = 0; k < logits.size(1); ++k) {
      const float want = logits[b][k].item<float>();
      EXPECT_NEAR(classified.results(b).logits(k), want, atol + rtol * std::abs(want))
          << name << " row " << b << " label " << k;
    }
  }
}

TEST_P(GoldenServerTest, AnswersOverGrpcEqualTheReference) {
  const std::string name = GetParam();
  const GoldenInputs in = ReadGoldenInputs(name);
  const GoldenExpected expected(name);
  service::ServerConfig config;
  config.service.special_tokens = {0, 1, 2, 3, static_cast<int32_t>(in.mask_id)};
  auto server = ServeCase(name, model::ComputeDType::kFloat32, config);
  ASSERT_NE(server, nullptr);

  // Classification: every row in one request.
  const pb::ClassifyRequest classify = EveryRow(in);
  pb::ClassifyResponse classified;
  auto context = ContextWithDeadline();
  grpc::Status status = server->stub->Classify(context.get(), classify, &classified);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectLogitsNear(classified, expected.Get("classifier_logits"), kAtol, kRtol, name);

  // Fill-mask: the rows with masks, found by the server from the mask id.
  pb::FillMaskRequest fill;
  fill.set_top_k(3);
  std::vector<int> rows;
  for (int b = 0; b < classify.sequences_size(); ++b) {
    bool has_mask = false;
    for (int32_t id : classify.sequences(b).token_ids()) has_mask |= id == in.mask_id;
    if (!has_mask) continue;
    *fill.add_sequences()->mutable_sequence() = classify.sequences(b);
    rows.push_back(b);
  }
  pb::FillMaskResponse filled;
  auto fill_context = ContextWithDeadline();
  status = server->stub->FillMask(fill_context.get(), fill, &filled);
  ASSERT_TRUE(status.ok()) << status.error_message();
  // Reference rows come in masked_positions order (row-major), as ours.
  const at::Tensor probabilities = at::softmax(expected.Get("mlm_logits_emd_at_masked"), -1);
  int64_t m = 0;
  for (const pb::FillMaskResult& result : filled.results()) {
    for (const pb::MaskPrediction& prediction : result.predictions()) {
      ASSERT_LT(m, probabilities.size(0));
      EXPECT_EQ(prediction.position(), in.masked_positions[m].second);
      auto [top, ids] = probabilities[m].topk(3);
      ASSERT_EQ(prediction.candidates_size(), 3);
      EXPECT_EQ(prediction.candidates(0).token_id(), ids[0].item<int64_t>()) << name << " mask " << m;
      for (const pb::TokenCandidate& candidate : prediction.candidates()) {
        EXPECT_NEAR(candidate.probability(), probabilities[m][candidate.token_id()].item<float>(), 1e-5);
      }
      ++m;
    }
  }
  EXPECT_EQ(m, static_cast<int64_t>(in.masked_positions.size()));
}

// --dtype=bfloat16 and int8 served like any dtype, on whatever kernels the
// CPU backend chose here (scripts/avx2_check.sh runs this as on an AVX2-only
// CPU): the model info says which, and the classifier's answers are within
// the dtype's budget of the reference.
void ExpectServedWithinBudget(const std::string& name, model::ComputeDType dtype, const char* dtype_name,
                              double tolerance) {
  const GoldenInputs in = ReadGoldenInputs(name);
  const GoldenExpected expected(name);
  auto server = ServeCase(name, dtype, service::ServerConfig());
  ASSERT_NE(server, nullptr);
  pb::ModelInfo info;
  auto info_context = ContextWithDeadline();
  ASSERT_TRUE(server->stub->GetModelInfo(info_context.get(), pb::GetModelInfoRequest(), &info).ok());
  EXPECT_EQ(info.dtype(), dtype_name);
  EXPECT_EQ(info.cpu_kernels().rfind("CPU ", 0), 0u) << info.cpu_kernels();

  pb::ClassifyResponse classified;
  auto context = ContextWithDeadline();
  grpc::Status status = server->stub->Classify(context.get(), EveryRow(in), &classified);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectLogitsNear(classified, expected.Get("classifier_logits"), tolerance, 0, name);
}

TEST_P(GoldenServerTest, BFloat16IsServedWithinItsBudget) {
  ExpectServedWithinBudget(GetParam(), model::ComputeDType::kBFloat16, "bfloat16", kBf16ClassifierTolerance);
}

TEST_P(GoldenServerTest, Int8IsServedWithinItsBudget) {
  ExpectServedWithinBudget(GetParam(), model::ComputeDType::kInt8, "int8", kInt8ClassifierTolerance);
}

INSTANTIATE_TEST_SUITE_P(AllCases, GoldenServerTest, ::testing::ValuesIn(GoldenCaseNames()));

}  // namespace
}  // namespace deberta::testing
