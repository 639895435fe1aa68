// AddRelativeScoreTerms against a plain loop over the definition, in every
// kernel the CPU backend has here (AVX2 blocks and the portable loops), on
// rows gathered everywhere (any row per distance), affine everywhere
// (i - j + offset) and affine within a reach only (the log buckets'
// shape), with both position terms, one or none, at lengths on and off the
// 8 x 8 and 16 x 16 blocks. The sums are made in the same order, so the
// answers are equal.
#include "model/torch/relative_score_terms.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <vector>

#include "model/torch/cpu_backend.h"

namespace deberta::model {
namespace {

struct Case {
  int64_t length, rows;   // rows: the position tables' rows (index values < rows)
  int64_t stride_extra;   // c2p/p2c rows are rows + stride_extra floats apart
  bool c2p, p2c;
  int64_t affine_reach;   // 0: no pair affine; >= length: every pair
};

std::vector<float> Random(std::mt19937& rng, int64_t n) {
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

void Check(const Case& c) {
  std::mt19937 rng(static_cast<uint32_t>(c.length * 31 + c.rows));
  const int64_t l = c.length, stride = c.rows + c.stride_extra;
  const std::vector<float> scores = Random(rng, l * l), c2p = Random(rng, l * stride), p2c = Random(rng, l * stride),
                           bias = Random(rng, l);
  // Rows per distance d = i - j, at [j - i + l - 1]: d + offset within the
  // reach, any row beyond it.
  const int64_t offset = l - 1;  // i - j + l - 1 lies in [0, 2l - 1) <= rows.
  std::uniform_int_distribution<int32_t> any_row(0, static_cast<int32_t>(c.rows - 1));
  std::vector<int32_t> by_distance(2 * l - 1);
  for (int64_t k = 0; k < 2 * l - 1; ++k) {
    const int64_t d = l - 1 - k;
    by_distance[k] = std::abs(d) < c.affine_reach ? static_cast<int32_t>(d + offset) : any_row(rng);
  }
  std::vector<int64_t> index(l * l);
  for (int64_t i = 0; i < l; ++i) {
    for (int64_t j = 0; j < l; ++j) index[i * l + j] = by_distance[j - i + l - 1];
  }
  // The definition: s[i][j] + c2p[i][idx] + p2c[j][idx] + bias[j], idx = index[i][j].
  std::vector<float> want = scores;
  for (int64_t i = 0; i < l; ++i) {
    for (int64_t j = 0; j < l; ++j) {
      const int64_t at = index[i * l + j];
      float sum = want[i * l + j];
      if (c.c2p) sum += c2p[i * stride + at];
      if (c.p2c) sum += p2c[j * stride + at];
      want[i * l + j] = sum + bias[j];
    }
  }
  std::vector<float> got = scores;
  AddRelativeScoreTerms(got.data(), l, c.c2p ? c2p.data() : nullptr, stride, c.p2c ? p2c.data() : nullptr, stride,
                        RelativeRows{by_distance.data(), offset, c.affine_reach}, bias.data());
  for (int64_t k = 0; k < l * l; ++k) {
    ASSERT_EQ(got[k], want[k]) << "at query " << k / l << ", key " << k % l;
  }
}

TEST(RelativeScoreTermsTest, MatchesAPlainLoopInEveryKernel) {
  for (CpuKernelMode mode : {CpuKernelMode::kAuto, CpuKernelMode::kPortable}) {
    ScopedCpuKernelMode forced(mode);
    for (int64_t length : {1, 7, 8, 16, 17, 64, 77}) {
      for (int64_t reach : {int64_t{0}, int64_t{1}, int64_t{9}, int64_t{20}, length}) {
        for (int terms = 0; terms < 4; ++terms) {
          const Case c{length, 2 * length, /*stride_extra=*/3, (terms & 1) != 0, (terms & 2) != 0, reach};
          SCOPED_TRACE(::testing::Message() << CpuKernelModeName(mode) << " length " << length << " affine reach "
                                          << reach << (c.c2p ? " c2p" : "") << (c.p2c ? " p2c" : ""));
          Check(c);
        }
      }
    }
  }
}

}  // namespace
}  // namespace deberta::model
