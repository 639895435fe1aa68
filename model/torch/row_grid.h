// The row counts our oneDNN linear products run at. oneDNN makes (JITs) a
// primitive for each number of rows it sees, about 1-2 ms each at 768 x
// 3072 on AVX-512, and has no blocked kernel for a row count given at run
// time (oneDNN 2.6: runtime M falls back to its reference kernel). The
// batcher forms any number of rows (sequences x padded length), so a first
// batch of a new shape paid those milliseconds in each product kind. So a
// product runs in chunks of at most kRowChunk rows, the last one padded up
// to a multiple of kRowGrain: a small, fixed set of row counts whose
// primitives the engine makes at warm-up (GridRowCounts). Padding costs
// at most kRowGrain - 1 rows of work, which at small row counts is hidden
// by the weights' reading time anyway.
#ifndef DEBERTA_MODEL_TORCH_ROW_GRID_H_
#define DEBERTA_MODEL_TORCH_ROW_GRID_H_

#include <cstdint>
#include <vector>

namespace deberta::model {

inline constexpr int64_t kRowGrain = 16;
inline constexpr int64_t kRowChunk = 1024;  // A multiple of kRowGrain.

// `rows` rounded up to the grid: what a product of `rows` rows computes.
inline int64_t PaddedRows(int64_t rows) { return (rows + kRowGrain - 1) / kRowGrain * kRowGrain; }

// Every chunk size a product can run: kRowGrain, 2 kRowGrain, ..., kRowChunk.
inline std::vector<int64_t> GridRowCounts() {
  std::vector<int64_t> counts;
  for (int64_t rows = kRowGrain; rows <= kRowChunk; rows += kRowGrain) counts.push_back(rows);
  return counts;
}

// Calls chunk(first_row, chunk_rows) over [0, padded_rows) in chunks of at
// most kRowChunk rows. REQUIRES: padded_rows a multiple of kRowGrain.
template <typename Fn>
void ForEachRowChunk(int64_t padded_rows, Fn&& chunk) {
  for (int64_t first = 0; first < padded_rows; first += kRowChunk) {
    chunk(first, padded_rows - first < kRowChunk ? padded_rows - first : kRowChunk);
  }
}

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_ROW_GRID_H_
