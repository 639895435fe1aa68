// AddRelativeScoreTerms against a plain loop over the definition, in every
// kernel the CPU backend has here (AVX2 blocks and the portable loops), on
// gathered (any index) and affine (i - j + offset) indices, with both
// position terms, one or none, at lengths on and off the 8 x 8 and 16 x 16
// blocks. The sums are made in the same order, so the answers are equal.
#include "model/torch/relative_score_terms.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "model/torch/cpu_backend.h"

namespace deberta::model {
namespace {

struct Case {
  int64_t length, rows;   // rows: the position tables' rows (index values < rows)
  int64_t stride_extra;   // c2p/p2c rows are rows + stride_extra floats apart
  bool c2p, p2c;
  bool affine;
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
  std::vector<int64_t> index(l * l);
  const int64_t offset = c.affine ? l - 1 : -1;  // i - j + l - 1 lies in [0, 2l - 1) <= rows.
  std::uniform_int_distribution<int64_t> any_row(0, c.rows - 1);
  for (int64_t i = 0; i < l; ++i) {
    for (int64_t j = 0; j < l; ++j) index[i * l + j] = c.affine ? i - j + offset : any_row(rng);
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
                        c.affine ? nullptr : index.data(), offset, bias.data());
  for (int64_t k = 0; k < l * l; ++k) {
    ASSERT_EQ(got[k], want[k]) << "at query " << k / l << ", key " << k % l;
  }
}

TEST(RelativeScoreTermsTest, MatchesAPlainLoopInEveryKernel) {
  for (CpuKernelMode mode : {CpuKernelMode::kAuto, CpuKernelMode::kPortable}) {
    ScopedCpuKernelMode forced(mode);
    for (int64_t length : {1, 7, 8, 16, 17, 64, 77}) {
      for (bool affine : {false, true}) {
        for (int terms = 0; terms < 4; ++terms) {
          const Case c{length, 2 * length, /*stride_extra=*/3, (terms & 1) != 0, (terms & 2) != 0, affine};
          SCOPED_TRACE(testing::Message() << CpuKernelModeName(mode) << " length " << length
                                          << (affine ? " affine" : " gathered") << (c.c2p ? " c2p" : "")
                                          << (c.p2c ? " p2c" : ""));
          Check(c);
        }
      }
    }
  }
}

}  // namespace
}  // namespace deberta::model
