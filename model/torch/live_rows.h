// LiveRows: the input rows a forward pass still computes, and the check,
// between parts of the encoder, that stops computing rows no longer wanted
// (their callers have gone: Engine::RowsWanted). A forward whose rows are
// all gone stops with a status, which the engine returns as it is.
#ifndef DEBERTA_MODEL_TORCH_LIVE_ROWS_H_
#define DEBERTA_MODEL_TORCH_LIVE_ROWS_H_

#include <ATen/core/Tensor.h>

#include <vector>

#include "absl/status/status.h"
#include "model/engine.h"
#include "model/torch/attention_context.h"

namespace deberta::model {

// Cancelled: "stopped: every caller of the batch has gone".
absl::Status BatchStoppedError();

class LiveRows {
 public:
  LiveRows() = default;
  // Input rows 0..count-1. `wanted` (null: never asked) must outlive this.
  LiveRows(int64_t count, const Engine::RowsWanted* wanted);

  // The input rows computed, ascending: row i of every [B', ...] tensor of
  // the forward is input row rows()[i].
  const std::vector<int64_t>& rows() const { return rows_; }

  // Asks `wanted` (if any) and drops the rows no longer wanted from this,
  // from `padding` and from each of `per_row` (tensors whose first
  // dimension is rows(); undefined ones are skipped). Rows past the
  // callers' (padding a batch up to its bucket) are never wanted once
  // anyone asks. BatchStoppedError when none is left.
  absl::Status DropUnwanted(KeyPadding* padding, const std::vector<at::Tensor*>& per_row);

  // BatchStoppedError if `wanted` wants none of rows(); drops nothing
  // (before a device graph's replay, which computes every row).
  absl::Status CheckAnyWanted() const;

  // Keeps the input rows below `limit` (the padding rows of a batch come
  // last, so what is kept is a prefix) and returns how many that is.
  int64_t KeepBelow(int64_t limit);

 private:
  // Whether input row `row` is in `wanted`'s answer.
  static bool IsWanted(const std::vector<bool>& wanted, int64_t row);

  std::vector<int64_t> rows_;
  const Engine::RowsWanted* wanted_ = nullptr;
};

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_LIVE_ROWS_H_
