// The row counts our oneDNN linear products run at. oneDNN makes (JITs) a
// primitive for each number of rows it sees, about 1-2 ms each at 768 x
// 3072 on AVX-512, and has no blocked kernel for a row count given at run
// time (oneDNN 2.6: runtime M falls back to its reference kernel). The
// batcher forms any number of rows (sequences x padded length), so a first
// batch of a new shape paid those milliseconds in each product kind. So a
// product runs on a small, fixed grid of row counts, whose primitives the
// engine makes at warm-up (WarmedRowCounts): its rows padded up to a
// multiple of kFineGrain up to kFineRows rows, of kCoarseGrain above
// (at most 6% more rows, at 1025), in chunks of at most kRowChunk rows.
// Chunks cost: an int8 product of 2048 rows ran 5-10% slower as two of
// 1024 (bench/results/ab-row-chunk), hence the coarse grain rather than
// chunks of 1024. Padding costs too: one sequence of 77 tokens (80 rows
// with a grain of 16 or 8) ran 5-7% slower (bench/results/ab-row-grid*);
// with a grain of 8 a batch of 8 or more sequences is never padded below
// kFineRows.
#ifndef DEBERTA_MODEL_TORCH_ROW_GRID_H_
#define DEBERTA_MODEL_TORCH_ROW_GRID_H_

#include <cstdint>
#include <vector>

namespace deberta::model {

inline constexpr int64_t kFineGrain = 8;
inline constexpr int64_t kFineRows = 1024;    // A multiple of both grains.
inline constexpr int64_t kCoarseGrain = 64;
inline constexpr int64_t kRowChunk = 4096;    // A multiple of kCoarseGrain.

// The rows one chunk of `rows` (at most kRowChunk) computes.
inline int64_t GridRows(int64_t rows) {
  const int64_t grain = rows <= kFineRows ? kFineGrain : kCoarseGrain;
  return (rows + grain - 1) / grain * grain;
}

// The rows a product of `rows` rows computes: whole chunks, then the rest
// on the grid.
inline int64_t PaddedRows(int64_t rows) {
  const int64_t whole = rows > 0 ? (rows - 1) / kRowChunk : 0;
  return whole * kRowChunk + GridRows(rows - whole * kRowChunk);
}

// Every row count a chunk can have: the fine grid, then the coarse one.
inline std::vector<int64_t> GridRowCounts() {
  std::vector<int64_t> counts;
  for (int64_t rows = kFineGrain; rows <= kFineRows; rows += kFineGrain) counts.push_back(rows);
  for (int64_t rows = kFineRows + kCoarseGrain; rows <= kRowChunk; rows += kCoarseGrain) counts.push_back(rows);
  return counts;
}

// The row counts the kernel warm-up makes primitives for: the fine grid.
// Each cached primitive holds 55-83 KiB (float32) to 237-316 KiB (int8 on
// AMX) of JIT code (bench/results/onednn-primitive-memory); above kFineRows a
// first row count's primitives cost about 5% of its forward.
inline std::vector<int64_t> WarmedRowCounts() {
  std::vector<int64_t> counts = GridRowCounts();
  counts.resize(kFineRows / kFineGrain);
  return counts;
}

// Calls chunk(first_row, chunk_rows) over the PaddedRows(rows) rows of a
// product of `rows` rows: chunks of kRowChunk rows, the last on the grid.
template <typename Fn>
void ForEachRowChunk(int64_t rows, Fn&& chunk) {
  int64_t first = 0;
  for (; rows - first > kRowChunk; first += kRowChunk) chunk(first, kRowChunk);
  if (rows > first) chunk(first, GridRows(rows - first));
}

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_ROW_GRID_H_
