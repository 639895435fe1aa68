// Softmax over the rows of one float32 score matrix, for CpuAttention: it
// runs on a (sequence, head) matrix right after its position terms are
// added, while the matrix is still in cache, and writes the probabilities
// in the dtype of the value product (float32 in place, or bfloat16), so
// neither a separate softmax pass nor a conversion pass is needed. Plain
// pointers, no tensors.
#ifndef DEBERTA_MODEL_TORCH_ROW_SOFTMAX_H_
#define DEBERTA_MODEL_TORCH_ROW_SOFTMAX_H_

#include <cstdint>

namespace deberta::model {

// s [rows, length] row-major, replaced by softmax(s) along each row. A row's
// entries may be as low as -1e30 (the key mask); those become 0, as they do
// in at::softmax. Every row must have a finite maximum.
void SoftmaxRowsInPlace(float* s, int64_t rows, int64_t length);

// The same, written to `out` [rows, length] as bfloat16 bits rounded to
// nearest even (at::Tensor::to's rounding); s is left as scratch.
void SoftmaxRowsToBFloat16(float* s, int64_t rows, int64_t length, uint16_t* out);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_ROW_SOFTMAX_H_
