// The fill-mask answer's last step: each LM-head row's k most probable
// tokens, with their softmax probabilities, computed in chunks of rows so
// that no more than a chunk's [rows, V] logits exist at once (the
// EngineOptions::max_logits_bytes_per_chunk budget).
#ifndef DEBERTA_MODEL_TORCH_HEADS_TOP_K_H_
#define DEBERTA_MODEL_TORCH_HEADS_TOP_K_H_

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "model/engine.h"

namespace deberta::model {

// `logits_of(begin, end)` returns the [end - begin, V] float32 logits of
// rows [begin, end), on any device; it is called once per chunk of at most
// `chunk_rows` rows, in order. `top_k[r]` (1..V, the caller clamps) is row
// r's count. Returns, for each of the top_k.size() rows, its top_k[r]
// tokens, most probable first. Rows of equal k share one topk call, and
// every chunk's results stay on the device until the end: one copy to the
// host per call (on a GPU, one synchronisation per batch).
std::vector<std::vector<TokenScore>> ChunkedTopK(
    const std::function<at::Tensor(int64_t begin, int64_t end)>& logits_of, const std::vector<int64_t>& top_k,
    int64_t chunk_rows);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_HEADS_TOP_K_H_
