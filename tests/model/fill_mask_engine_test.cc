// TorchEngine's fill-mask on every golden case: the LM head run in chunks of
// positions (down to one position per chunk) answers exactly as in one
// piece, each sequence gets its own top_k, and the best candidate is the
// reference's argmax. Also: rows no longer wanted are dropped at every
// check (three per layer, one before each EMD pass) without changing the
// others, and a batch with none left stops with Cancelled.
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
          // The same float32 sums, in another order where the product's row
          // count picks another kernel (oneDNN's sgemm on AVX2 takes a gemv
          // for one row): a few ulps of the logits, 1.01e-6 on a 0.36 seen.
          const float want = w[p].candidates[c].probability;
          EXPECT_NEAR(g[p].candidates[c].probability, want, 1e-6 + 4e-6 * want);
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

// Rows whose caller goes are dropped between layers; the rows left answer
// as they would have in the full batch, on every golden case (conv layer,
// EMD and relative attention included).
class RowDroppingTest : public ::testing::TestWithParam<std::string> {};

// Answers `rows_wanted` for four rows: row r goes at check drop_at[r]
// (0: never), counting the checks in `checks`.
Engine::RowsWanted DroppingAt(std::vector<int> drop_at, int* checks) {
  return [drop_at, checks] {
    ++*checks;
    std::vector<bool> wanted;
    for (int at : drop_at) wanted.push_back(at == 0 || *checks < at);
    return wanted;
  };
}

// Row 3 (kept) must answer as in the full batch; rows 0-2 come back empty.
void ExpectOnlyTheLastRowAnswered(const std::vector<FillMaskOutput>& full,
                                  const std::vector<FillMaskOutput>& dropped) {
  ASSERT_EQ(dropped.size(), 4u);
  for (size_t r = 0; r < 3; ++r) EXPECT_TRUE(dropped[r].predictions.empty()) << "row " << r;
  ASSERT_EQ(dropped[3].predictions.size(), 2u);
  for (size_t p = 0; p < 2; ++p) {
    const MaskPrediction& want = full[3].predictions[p];
    const MaskPrediction& got = dropped[3].predictions[p];
    EXPECT_EQ(got.position, want.position);
    ASSERT_EQ(got.candidates.size(), want.candidates.size());
    for (size_t c = 0; c < want.candidates.size(); ++c) {
      EXPECT_NEAR(got.candidates[c].probability, want.candidates[c].probability, 1e-5);
    }
    EXPECT_EQ(got.candidates[0].token_id, want.candidates[0].token_id);
  }
}

TEST_P(RowDroppingTest, UnwantedRowsAreDroppedBetweenLayersAndTheRestAnswerAsBefore) {
  auto engine = Engine(GetParam(), int64_t{1} << 30);
  ASSERT_NE(engine, nullptr);
  // Different lengths, so padding changes when the longest row goes.
  const std::vector<Sequence> sequences{{{1, 7, 8, 9, 2}, {}},
                                        {{1, 11, 12, 13, 14, 15, 16, 2}, {}},
                                        {{1, 30, 31, 32, 33, 2}, {}},
                                        {{1, 20, 21, 2}, {}}};
  std::vector<MaskedSequence> masked;
  for (const Sequence& s : sequences) masked.push_back({s, {1, 2}, 3});
  auto full = engine->FillMask(masked);
  ASSERT_TRUE(full.ok()) << full.status();
  // How many checks a whole forward makes: three per layer (before the
  // attention, the feed-forward's up and its down product), and one before
  // each of EMD's two passes.
  int checks = 0;
  ASSERT_TRUE(engine->FillMask(masked, DroppingAt({0, 0, 0, 0}, &checks)).ok());
  const int layers = static_cast<int>(engine->info().num_layers);
  EXPECT_EQ(checks, 3 * layers + (engine->info().emd_enabled ? 2 : 0));
  const int last_check = checks;

  // Row 1 goes before the first layer, row 0 before its feed-forward, row 2
  // between the feed-forward's two products.
  checks = 0;
  auto dropped = engine->FillMask(masked, DroppingAt({2, 1, 3, 0}, &checks));
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(checks, last_check);
  ExpectOnlyTheLastRowAnswered(*full, *dropped);

  // The same rows gone at the last three checks (with EMD, before its
  // passes; without, inside the last layer).
  checks = 0;
  dropped = engine->FillMask(masked, DroppingAt({last_check - 1, last_check - 2, last_check, 0}, &checks));
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  ExpectOnlyTheLastRowAnswered(*full, *dropped);

  if (engine->info().has_classifier) {
    checks = 0;
    auto all = engine->Classify(sequences);
    auto some = engine->Classify(sequences, DroppingAt({2, 1, 3, 0}, &checks));
    ASSERT_TRUE(all.ok()) << all.status();
    ASSERT_TRUE(some.ok()) << some.status();
    EXPECT_EQ(checks, 3 * layers);
    for (size_t r = 0; r < 3; ++r) EXPECT_TRUE((*some)[r].logits.empty()) << "row " << r;
    ASSERT_EQ((*some)[3].logits.size(), (*all)[3].logits.size());
    for (size_t l = 0; l < (*all)[3].logits.size(); ++l) {
      EXPECT_NEAR((*some)[3].logits[l], (*all)[3].logits[l], 1e-4);
    }
  }
}

TEST_P(RowDroppingTest, ABatchStopsWithCancelledWhenNoRowIsWanted) {
  auto engine = Engine(GetParam(), int64_t{1} << 30);
  ASSERT_NE(engine, nullptr);
  const Sequence sequence{{1, 7, 8, 9, 2}, {}};
  MaskedSequence masked{sequence, {2}, 3};
  int checks = 0;
  // Stops at the second check: the first lets it run.
  const Engine::RowsWanted none_after_one = [&checks] { return std::vector<bool>{++checks < 2}; };
  auto stopped = engine->FillMask({masked}, none_after_one);
  EXPECT_TRUE(absl::IsCancelled(stopped.status())) << stopped.status();
  EXPECT_EQ(checks, 2);
  if (engine->info().has_classifier) {
    auto classified = engine->Classify({sequence}, [] { return std::vector<bool>{false}; });
    EXPECT_TRUE(absl::IsCancelled(classified.status())) << classified.status();
  }
}

INSTANTIATE_TEST_SUITE_P(AllCases, RowDroppingTest, ::testing::ValuesIn(GoldenCaseNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace deberta::model
