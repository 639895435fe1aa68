// ChunkedTopK against the plain computation (a whole-vocabulary softmax per
// row, sorted): every chunk size from one row to more than all, each row
// its own k (1, some, the whole vocabulary), and the chunks asked for in
// order and never larger than the budget.
#include "model/torch/heads/top_k.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace deberta::model {
namespace {

// Row r's k most probable tokens, computed the plain way.
std::vector<TokenScore> PlainTopK(const at::Tensor& logits, int64_t r, int64_t k) {
  const at::Tensor probabilities = at::softmax(logits[r].to(at::kDouble), -1).contiguous();
  const double* p = probabilities.data_ptr<double>();
  std::vector<int32_t> ids(static_cast<size_t>(logits.size(1)));
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [p](int32_t a, int32_t b) { return p[a] > p[b]; });
  std::vector<TokenScore> top;
  for (int64_t c = 0; c < k; ++c) top.push_back({ids[c], static_cast<float>(p[ids[c]])});
  return top;
}

TEST(ChunkedTopKTest, MatchesThePlainSoftmaxAndSortForEveryChunkSize) {
  at::manual_seed(7);
  const int64_t rows = 7, vocab = 50;
  const at::Tensor logits = at::randn({rows, vocab}) * 4;
  const std::vector<int64_t> top_k{1, 5, vocab, 5, 1, 3, 5};
  for (int64_t chunk_rows : {1, 2, 3, 6, 7, 100}) {
    SCOPED_TRACE(chunk_rows);
    int64_t next = 0;  // The first row the next chunk must start at.
    auto logits_of = [&](int64_t begin, int64_t end) {
      EXPECT_EQ(begin, next);
      EXPECT_LE(end - begin, chunk_rows);
      next = end;
      return logits.slice(0, begin, end);
    };
    const std::vector<std::vector<TokenScore>> got = ChunkedTopK(logits_of, top_k, chunk_rows);
    EXPECT_EQ(next, rows);
    ASSERT_EQ(got.size(), static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<TokenScore> want = PlainTopK(logits, r, top_k[r]);
      ASSERT_EQ(got[r].size(), want.size()) << "row " << r;
      for (size_t c = 0; c < want.size(); ++c) {
        EXPECT_EQ(got[r][c].token_id, want[c].token_id) << "row " << r << " candidate " << c;
        EXPECT_NEAR(got[r][c].probability, want[c].probability, 1e-6) << "row " << r << " candidate " << c;
      }
    }
  }
}

TEST(ChunkedTopKTest, NoRowsAsksForNoLogits) {
  bool asked = false;
  const auto got = ChunkedTopK(
      [&](int64_t, int64_t) {
        asked = true;
        return at::Tensor();
      },
      {}, 4);
  EXPECT_TRUE(got.empty());
  EXPECT_FALSE(asked);
}

}  // namespace
}  // namespace deberta::model
