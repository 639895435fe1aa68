// Length-aware batch formation on tiny literal inputs.
#include "service/batch_formation.h"

#include <gtest/gtest.h>

namespace deberta::service {
namespace {

TEST(BatchFormationTest, OldestIsAlwaysIncluded) {
  EXPECT_EQ(FormLengthAwareBatch({100, 5, 6, 7}, {2, 1000}), (std::vector<size_t>{0, 3}));
}

TEST(BatchFormationTest, GroupsSimilarLengths) {
  // Oldest is 10; the two other short ones join, the long ones do not.
  EXPECT_EQ(FormLengthAwareBatch({10, 200, 12, 210, 9}, {3, 10000}),
            (std::vector<size_t>{0, 2, 4}));
}

TEST(BatchFormationTest, PaddedTokenBudgetLimitsBatch) {
  // 3 x 100 = 300 padded tokens fit, a fourth would not.
  EXPECT_EQ(FormLengthAwareBatch({100, 100, 100, 100}, {32, 300}), (std::vector<size_t>{0, 1, 2}));
}

TEST(BatchFormationTest, OverBudgetSequenceRunsAlone) {
  EXPECT_EQ(FormLengthAwareBatch({500, 10}, {32, 100}), (std::vector<size_t>{0}));
}

TEST(BatchFormationTest, EmptyQueueGivesEmptyBatch) {
  EXPECT_TRUE(FormLengthAwareBatch({}, {}).empty());
}

TEST(BatchFormationTest, LengthAwareWastesLessPaddingThanFirstCome) {
  const std::vector<int64_t> lengths{16, 256, 20, 240, 18, 250, 17, 230};
  const BatchLimits limits{4, 100000};
  auto aware = FormLengthAwareBatch(lengths, limits);
  auto fifo = FormFirstComeBatch(lengths, limits);
  EXPECT_EQ(aware, (std::vector<size_t>{0, 2, 4, 6}));
  EXPECT_EQ(fifo, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_LT(PaddedTokens(lengths, aware), PaddedTokens(lengths, fifo));
}

}  // namespace
}  // namespace deberta::service
