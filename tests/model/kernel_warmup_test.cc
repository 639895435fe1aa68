// The kernel warm-up (EngineOptions::warmup_kernels): after it, a batch of
// a shape never seen makes no oneDNN primitive (counted in oneDNN's
// verbose output, one "create:cache_miss" line per primitive made), which
// without it the same batch does; and the answers are the same with it
// as without; and the same for the int8 product of CPUs without VNNI on
// its own. The row grid of the linear products (row_grid.h) is checked
// in packed_linear_test.cc.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/engine_factory.h"
#include "model/engine_options.h"
#include "model/torch/cpu_backend.h"
#include "model/torch/int8_no_vnni.h"
#include "model/torch/row_grid.h"

#ifdef DEBERTA_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace deberta::model {
namespace {

TEST(RowGridTest, RowsArePaddedToTheGridAndRunInChunksOfIt) {
  EXPECT_EQ(PaddedRows(0), 0);
  EXPECT_EQ(PaddedRows(1), kFineGrain);
  EXPECT_EQ(PaddedRows(kFineGrain), kFineGrain);
  EXPECT_EQ(PaddedRows(kFineGrain + 1), 2 * kFineGrain);
  EXPECT_EQ(PaddedRows(kFineRows), kFineRows);
  EXPECT_EQ(PaddedRows(kFineRows + 1), kFineRows + kCoarseGrain);
  EXPECT_EQ(PaddedRows(kRowChunk + 1), kRowChunk + kFineGrain);
  const std::vector<int64_t> grid = GridRowCounts();
  ASSERT_FALSE(grid.empty());
  EXPECT_EQ(grid.front(), kFineGrain);
  EXPECT_EQ(grid.back(), kRowChunk);
  const std::vector<int64_t> warmed = WarmedRowCounts();
  EXPECT_EQ(warmed.back(), kFineRows);
  EXPECT_TRUE(std::equal(warmed.begin(), warmed.end(), grid.begin()));
  for (int64_t rows = 1; rows <= 3 * kRowChunk + 100; rows += 7) {
    std::vector<std::pair<int64_t, int64_t>> chunks;
    ForEachRowChunk(rows, [&](int64_t first, int64_t count) { chunks.emplace_back(first, count); });
    int64_t next = 0;
    for (const auto& [first, count] : chunks) {
      ASSERT_EQ(first, next) << rows;
      ASSERT_NE(std::find(grid.begin(), grid.end(), count), grid.end()) << rows << ": chunk of " << count;
      next = first + count;
    }
    ASSERT_EQ(next, PaddedRows(rows)) << rows;
    ASSERT_GE(next, rows);
    // At most one grain more than asked (a chunk's whole rows are real).
    ASSERT_LT(next - rows, rows - chunks.back().first <= kFineRows ? kFineGrain : kCoarseGrain) << rows;
  }
}

#ifdef DEBERTA_WITH_ONEDNN

// oneDNN's primitive cache is the process's: emptied (a capacity of 0
// drops every entry), so that no earlier test's primitives count.
void EmptyPrimitiveCache() {
  const int capacity = dnnl::get_primitive_cache_capacity();
  dnnl::set_primitive_cache_capacity(0);
  dnnl::set_primitive_cache_capacity(capacity);
}

// How many primitives oneDNN made while `fn` ran.
int PrimitivesMadeDuring(const std::function<void()>& fn) {
  ::testing::internal::CaptureStdout();
  dnnl::set_verbose(2);
  fn();
  dnnl::set_verbose(0);
  const std::string log = ::testing::internal::GetCapturedStdout();
  int made = 0;
  for (size_t at = log.find("create:cache_miss"); at != std::string::npos;
       at = log.find("create:cache_miss", at + 1)) {
    ++made;
  }
  return made;
}

std::vector<Sequence> OneSequence(int length) {
  Sequence sequence;
  for (int i = 0; i < length; ++i) sequence.token_ids.push_back(5 + i % 50);
  return {sequence};
}

class KernelWarmupTest : public ::testing::TestWithParam<ComputeDType> {
 protected:
  // The demo model (classifier and MLM head), lengths up to 64.
  static EngineOptions Options(bool warmup_kernels) {
    EngineOptions options;
    options.num_threads = 1;
    options.max_sequence_length = 64;
    options.dtype = GetParam();
    options.warmup_kernels = warmup_kernels;
    return options;
  }
};

// Every length's attention primitives are made only where its products
// run in bfloat16 (float32's cost next to nothing to make), so the test
// runs where this CPU's backend has bfloat16 kernels.
bool WarmsEveryLengthHere(ComputeDType dtype) {
  const CpuKernelChoice& kernels = CpuKernels();
  const at::ScalarType products = dtype == ComputeDType::kInt8       ? kernels.int8_other_products
                                   : dtype == ComputeDType::kBFloat16 ? at::kBFloat16
                                                                      : at::kFloat;
  return products == at::kBFloat16 && kernels.FusedAttention(at::kBFloat16) && kernels.PacksLinear(at::kBFloat16);
}

// The int8 product of CPUs without VNNI (int8_no_vnni.h) on its own: after
// its warm-up, no call of up to kNoVnniSplitMaxRows rows makes a primitive
// (above, it runs no oneDNN product); without, a first call does. Runs on
// every CPU (it is the product, not the backend's choice, under test).
TEST(Int8NoVnniWarmupTest, TheRowGridsPrimitivesAreMadeBeforeTheFirstCall) {
  const at::Tensor quantized = at::randint(-127, 128, {48, 64}, at::kChar), scales = at::rand({48}) + 0.01;
  // No GELU: LibTorch runs it as a oneDNN eltwise primitive of its own per new shape.
  const auto packed = PackNoVnniInt8(quantized, scales, at::randn({48}), /*gelu=*/false);
  ASSERT_NE(packed, nullptr);
  const std::vector<int64_t> rows{1, 9, 33, kNoVnniSplitMaxRows, kNoVnniSplitMaxRows + 1, 700};
  EmptyPrimitiveCache();
  EXPECT_GT(PrimitivesMadeDuring([&] { NoVnniInt8Forward(*packed, at::randn({33, 64}), at::kFloat); }), 0);
  EmptyPrimitiveCache();
  EXPECT_GT(PrimitivesMadeDuring([&] { PrepareNoVnniInt8RowGrid(*packed); }), 0);
  for (const int64_t count : rows) {
    EXPECT_EQ(PrimitivesMadeDuring([&] { NoVnniInt8Forward(*packed, at::randn({count, 64}), at::kFloat); }), 0)
        << count << " rows";
  }
}

TEST_P(KernelWarmupTest, NoPrimitiveIsMadeForANewShapeAfterTheWarmUp) {
  if (!WarmsEveryLengthHere(GetParam())) GTEST_SKIP() << "its attention products are float32 on this CPU: only the row grid is warmed up";
  for (bool warmup_kernels : {false, true}) {
    SCOPED_TRACE(warmup_kernels ? "warm-up kernels" : "no warm-up kernels");
    EmptyPrimitiveCache();
    auto engine = CreateTorchEngine(Options(warmup_kernels));
    ASSERT_TRUE(engine.ok()) << engine.status();
    absl::Status initialized;
    PrimitivesMadeDuring([&] { initialized = (*engine)->InitializeThread(); });
    ASSERT_TRUE(initialized.ok()) << initialized;
    // Lengths the warm-up's own batch (1 x 8) did not have, one sequence each.
    for (int length : {5, 23, 40, 64}) {
      absl::Status classified;
      const int made = PrimitivesMadeDuring([&] { classified = (*engine)->Classify(OneSequence(length)).status(); });
      ASSERT_TRUE(classified.ok()) << classified;
      if (warmup_kernels) {
        EXPECT_EQ(made, 0) << "1 x " << length;
      } else {
        EXPECT_GT(made, 0) << "1 x " << length;  // What the warm-up saves: this check can fail.
      }
    }
  }
}

TEST_P(KernelWarmupTest, AnswersAreTheSameWithAndWithoutTheWarmUp) {
  std::vector<std::vector<float>> logits[2];
  for (bool warmup_kernels : {false, true}) {
    auto engine = CreateTorchEngine(Options(warmup_kernels));
    ASSERT_TRUE(engine.ok()) << engine.status();
    absl::Status initialized;
    PrimitivesMadeDuring([&] { initialized = (*engine)->InitializeThread(); });  // Its log is not wanted here.
    ASSERT_TRUE(initialized.ok()) << initialized;
    for (int length : {3, 17, 64}) {
      auto out = (*engine)->Classify(OneSequence(length));
      ASSERT_TRUE(out.ok()) << out.status();
      logits[warmup_kernels].push_back((*out)[0].logits);
    }
  }
  EXPECT_EQ(logits[0], logits[1]);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, KernelWarmupTest,
                         ::testing::Values(ComputeDType::kFloat32, ComputeDType::kBFloat16, ComputeDType::kInt8),
                         [](const ::testing::TestParamInfo<ComputeDType>& info) {
                           return std::string(ComputeDTypeName(info.param));
                         });

#endif  // DEBERTA_WITH_ONEDNN

}  // namespace
}  // namespace deberta::model
