// One pass over the scores for the position terms and the key mask.
#include "model/torch/relative_score_terms.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>

namespace deberta::model {
namespace {

bool PositionTermFits(const at::Tensor& term, const at::Tensor& scores) {
  if (!term.defined()) return true;
  return term.device().is_cpu() && (term.scalar_type() == at::kFloat || term.scalar_type() == at::kBFloat16) &&
         term.dim() == 4 && term.size(0) == scores.size(0) && term.size(1) == scores.size(1) &&
         term.size(2) == scores.size(2) && term.stride(3) == 1;
}

// One (b, h) score matrix s [L, L]: c2p and p2c point at its query and key
// rows (row r at + r * stride; null: no such term), index at c2p_index.
template <typename T>
struct Matrix {
  float* s;
  const T* c2p;
  const T* p2c;
  int64_t c2p_stride, p2c_stride;
  const int64_t* index;
  const float* bias;
  int64_t length;
};

template <typename T>
inline __attribute__((always_inline)) void AddToMatrix(const Matrix<T>& m) {
  const int64_t length = m.length;
  if (m.c2p != nullptr) {
    for (int64_t i = 0; i < length; ++i) {
      const T* c = m.c2p + i * m.c2p_stride;
      const int64_t* at_i = m.index + i * length;
      float* s_i = m.s + i * length;
      for (int64_t j = 0; j < length; ++j) s_i[j] += static_cast<float>(c[at_i[j]]);
    }
  }
  // p2c is read down its columns (key j's row at p2c_index[j][i], which is
  // c2p_index[i][j]): in tiles of kTile keys, so each query's writes fill
  // whole cache lines and the tile's p2c rows stay in cache from one query
  // to the next.
  constexpr int64_t kTile = 16;
  for (int64_t first = 0; first < length; first += kTile) {
    const int64_t last = std::min(length, first + kTile);
    for (int64_t i = 0; i < length; ++i) {
      float* s_i = m.s + i * length;
      const int64_t* at_i = m.index + i * length;
      for (int64_t j = first; j < last; ++j) {
        const float p = m.p2c != nullptr ? static_cast<float>(m.p2c[j * m.p2c_stride + at_i[j]]) : 0.0f;
        s_i[j] = s_i[j] + p + m.bias[j];  // (content + c2p) + p2c, then the mask: the unfused order.
      }
    }
  }
}

// Compiled for AVX-512, AVX2 and the baseline, picked at load time (the
// project builds for the baseline x86-64): gathers and conversions vectorize.
__attribute__((target_clones("avx512f", "avx2", "default"))) void AddToFloatMatrix(const Matrix<float>& m) {
  AddToMatrix(m);
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void AddToBFloat16Matrix(
    const Matrix<c10::BFloat16>& m) {
  AddToMatrix(m);
}
void AddToOneMatrix(const Matrix<float>& m) { AddToFloatMatrix(m); }
void AddToOneMatrix(const Matrix<c10::BFloat16>& m) { AddToBFloat16Matrix(m); }

template <typename T>
void AddTerms(at::Tensor& scores, const at::Tensor& c2p, const at::Tensor& p2c, const at::Tensor& index,
              const at::Tensor& key_bias) {
  const int64_t batch = scores.size(0), heads = scores.size(1), length = scores.size(2);
  float* out = scores.data_ptr<float>();
  const T* c2p_data = c2p.defined() ? c2p.data_ptr<T>() : nullptr;
  const T* p2c_data = p2c.defined() ? p2c.data_ptr<T>() : nullptr;
  const float* bias = key_bias.data_ptr<float>();
  // One task per (b, h) score matrix.
  at::parallel_for(0, batch * heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / heads, h = bh % heads;
      Matrix<T> m{out + bh * length * length, nullptr, nullptr, 0, 0, index.data_ptr<int64_t>(),
                  bias + b * key_bias.stride(0), length};
      if (c2p_data != nullptr) {
        m.c2p = c2p_data + b * c2p.stride(0) + h * c2p.stride(1);
        m.c2p_stride = c2p.stride(2);
      }
      if (p2c_data != nullptr) {
        m.p2c = p2c_data + b * p2c.stride(0) + h * p2c.stride(1);
        m.p2c_stride = p2c.stride(2);
      }
      AddToOneMatrix(m);
    }
  });
}

}  // namespace

bool RelativeScoreTermsApply(const at::Tensor& scores, const at::Tensor& c2p, const at::Tensor& p2c,
                             const at::Tensor& c2p_index, const at::Tensor& key_bias) {
  if (!scores.device().is_cpu() || scores.scalar_type() != at::kFloat || scores.dim() != 4 ||
      !scores.is_contiguous() || scores.size(2) != scores.size(3)) {
    return false;
  }
  if (c2p.defined() && p2c.defined() && c2p.scalar_type() != p2c.scalar_type()) return false;
  const int64_t length = scores.size(2);
  const bool index_fits = (!c2p.defined() && !p2c.defined()) ||
                          (c2p_index.defined() && c2p_index.device().is_cpu() &&
                           c2p_index.scalar_type() == at::kLong && c2p_index.dim() == 2 &&
                           c2p_index.size(0) == length && c2p_index.size(1) == length && c2p_index.is_contiguous());
  return PositionTermFits(c2p, scores) && PositionTermFits(p2c, scores) && index_fits && key_bias.defined() &&
         key_bias.device().is_cpu() && key_bias.scalar_type() == at::kFloat && key_bias.dim() == 4 &&
         key_bias.size(0) == scores.size(0) && key_bias.size(3) == length && key_bias.stride(3) == 1;
}

void AddRelativeScoreTerms(at::Tensor& scores, const at::Tensor& c2p, const at::Tensor& p2c,
                           const at::Tensor& c2p_index, const at::Tensor& key_bias) {
  RECORD_FUNCTION("deberta::relative_score_terms", std::vector<c10::IValue>());  // Named in profiles.
  const at::Tensor& any_term = c2p.defined() ? c2p : p2c;
  if (any_term.defined() && any_term.scalar_type() == at::kBFloat16) {
    AddTerms<c10::BFloat16>(scores, c2p, p2c, c2p_index, key_bias);
  } else {
    AddTerms<float>(scores, c2p, p2c, c2p_index, key_bias);
  }
}

}  // namespace deberta::model
