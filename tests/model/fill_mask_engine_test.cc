// TorchEngine's fill-mask on every golden case: the LM head run in chunks of
// positions (down to one position per chunk) answers exactly as in one
// piece, each sequence gets its own top_k, and the best candidate is the
// reference's argmax. Also: a batch whose stop check fires stops between
// layers with Cancelled.
#include <gtest/gtest.h>

#include "model/torch/torch_engine.h"
#include "tests/testing/golden_case.h"

namespace deberta::model {
namespace {

using ::deberta::testing::GoldenCaseNames;
using ::deberta::testing::GoldenDir;
using ::deberta::testing::GoldenExpected;
using ::deberta::testing::GoldenInputs;
using ::deberta::testing::ReadGoldenInputs;

std::unique_ptr<TorchEngine> Engine(const std::string& name, int64_t max_logits_bytes_per_chunk) {
  EngineOptions options;
  options.model = GoldenDir() + "/" + name;
  options.num_threads = 2;
  options.max_logits_bytes_per_chunk = max_logits_bytes_per_chunk;
  auto engine = TorchEngine::Create(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? *std::move(engine) : nullptr;
}

class FillMaskEngineTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FillMaskEngineTest, ChunkedLmHeadAndPerSequenceTopKMatchOnePiece) {
  const std::string name = GetParam();
  GoldenInputs in = ReadGoldenInputs(name);
  std::vector<MaskedSequence> inputs;
  for (size_t b = 0; b < in.lengths.size(); ++b) {
    MaskedSequence masked;
    for (int64_t t = 0; t < in.lengths[b]; ++t) {
      masked.sequence.token_ids.push_back(static_cast<int32_t>(in.input_ids[b][t].item<int64_t>()));
    }
    for (auto [row, pos] : in.masked_positions) {
      if (row == static_cast<int64_t>(b)) masked.positions.push_back(static_cast<int32_t>(pos));
    }
    // Every position when the row has no mask, so chunks span sequences.
    if (masked.positions.empty()) {
      for (int64_t t = 0; t < in.lengths[b]; ++t) masked.positions.push_back(static_cast<int32_t>(t));
    }
    masked.top_k = 1 + 3 * static_cast<int32_t>(b % 3);  // 1, 4, 7, ...
    inputs.push_back(std::move(masked));
  }
  auto whole = Engine(name, /*max_logits_bytes_per_chunk=*/int64_t{1} << 30);
  ASSERT_NE(whole, nullptr);
  const int64_t vocab = whole->info().vocab_size;
  auto one_row = Engine(name, /*max_logits_bytes_per_chunk=*/vocab * 4);
  auto three_rows = Engine(name, /*max_logits_bytes_per_chunk=*/vocab * 4 * 3 + 1);
  ASSERT_NE(one_row, nullptr);
  ASSERT_NE(three_rows, nullptr);

  auto want = whole->FillMask(inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  for (TorchEngine* engine : {one_row.get(), three_rows.get()}) {
    auto got = engine->FillMask(inputs);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), inputs.size());
    for (size_t b = 0; b < inputs.size(); ++b) {
      const auto& g = (*got)[b].predictions;
      const auto& w = (*want)[b].predictions;
      ASSERT_EQ(g.size(), inputs[b].positions.size());
      ASSERT_EQ(w.size(), g.size());
      for (size_t p = 0; p < g.size(); ++p) {
        EXPECT_EQ(g[p].position, inputs[b].positions[p]);
        ASSERT_EQ(g[p].candidates.size(), static_cast<size_t>(inputs[b].top_k)) << "sequence " << b;
        ASSERT_EQ(w[p].candidates.size(), g[p].candidates.size());
        for (size_t c = 0; c < g[p].candidates.size(); ++c) {
          EXPECT_EQ(g[p].candidates[c].token_id, w[p].candidates[c].token_id);
          EXPECT_NEAR(g[p].candidates[c].probability, w[p].candidates[c].probability, 1e-6);
        }
      }
    }
  }
  // The best candidate at each masked position is the reference's argmax.
  at::Tensor at_masked = GoldenExpected(name).Get("mlm_logits_emd_at_masked");
  for (size_t m = 0; m < in.masked_positions.size(); ++m) {
    auto [row, pos] = in.masked_positions[m];
    const auto& predictions = (*want)[row].predictions;
    auto it = std::find_if(predictions.begin(), predictions.end(),
                           [&](const MaskPrediction& p) { return p.position == pos; });
    ASSERT_NE(it, predictions.end());
    EXPECT_EQ(it->candidates[0].token_id, at_masked[m].argmax().item<int64_t>());
  }
}

INSTANTIATE_TEST_SUITE_P(AllCases, FillMaskEngineTest, ::testing::ValuesIn(GoldenCaseNames()),
                         [](const auto& info) { return info.param; });

TEST(EngineStopTest, ABatchStopsBetweenLayersWhenItsStopCheckFires) {
  const std::string name = GoldenCaseNames().front();
  auto engine = Engine(name, int64_t{1} << 30);
  ASSERT_NE(engine, nullptr);
  const Sequence sequence{{1, 7, 8, 9, 2}, {}};
  MaskedSequence masked{sequence, {2}, 3};
  int checks = 0;
  // Stops before the second layer: the first check lets it run.
  const Engine::StopCheck stop_after_one = [&checks] { return ++checks > 1; };
  auto stopped = engine->FillMask({masked}, stop_after_one);
  EXPECT_TRUE(absl::IsCancelled(stopped.status())) << stopped.status();
  EXPECT_EQ(checks, 2);
  if (engine->info().has_classifier) {
    auto classified = engine->Classify({sequence}, [] { return true; });
    EXPECT_TRUE(absl::IsCancelled(classified.status())) << classified.status();
  }
  // A check that never fires changes nothing.
  auto full = engine->FillMask({masked}, [] { return false; });
  auto plain = engine->FillMask({masked});
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ((*full)[0].predictions[0].candidates[0].token_id, (*plain)[0].predictions[0].candidates[0].token_id);
}

}  // namespace
}  // namespace deberta::model
