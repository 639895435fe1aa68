// ChunkedTopK: per-row top-k of softmax probabilities, chunk by chunk.
#include "model/torch/heads/top_k.h"

#include <ATen/ATen.h>

#include <map>

namespace deberta::model {

std::vector<std::vector<TokenScore>> ChunkedTopK(
    const std::function<at::Tensor(int64_t begin, int64_t end)>& logits_of, const std::vector<int64_t>& top_k,
    int64_t chunk_rows) {
  const auto rows = static_cast<int64_t>(top_k.size());
  // Each group (rows of one chunk with one k) leaves its probabilities and
  // ids on the device; ids travel as float32, exact: vocab_size <= 2^24
  // (config limits).
  struct Group {
    int64_t begin, k, offset;    // First row of its chunk, its k, its place in `host`.
    std::vector<int64_t> local;  // Its rows, relative to `begin`.
  };
  std::vector<Group> groups;
  std::vector<at::Tensor> pieces;
  int64_t offset = 0;
  for (int64_t begin = 0; begin < rows; begin += chunk_rows) {
    const int64_t end = std::min(rows, begin + chunk_rows);
    const at::Tensor logits = logits_of(begin, end);
    // softmax(l)[id] = exp(l[id] - logsumexp(l)): no [rows, V] probabilities.
    const at::Tensor log_norm = logits.logsumexp(-1, /*keepdim=*/true);
    std::map<int64_t, std::vector<int64_t>> rows_by_k;
    for (int64_t r = begin; r < end; ++r) rows_by_k[top_k[r]].push_back(r - begin);
    for (auto& [k, local] : rows_by_k) {
      const auto n = static_cast<int64_t>(local.size());
      at::Tensor picked = logits, norm = log_norm;
      if (n != end - begin) {
        const at::Tensor select = at::from_blob(local.data(), {n}, at::kLong).to(logits.device());
        picked = logits.index_select(0, select);
        norm = log_norm.index_select(0, select);
      }
      auto [top_logit, top_id] = picked.topk(k, -1);
      pieces.push_back((top_logit - norm).exp().reshape({-1}));
      pieces.push_back(top_id.to(at::kFloat).reshape({-1}));
      groups.push_back({begin, k, offset, std::move(local)});
      offset += 2 * n * k;
    }
  }
  std::vector<std::vector<TokenScore>> top(rows);
  if (pieces.empty()) return top;
  const at::Tensor host = at::cat(pieces).to(at::kCPU).contiguous();
  const float* data = host.data_ptr<float>();
  for (const Group& group : groups) {
    const auto n = static_cast<int64_t>(group.local.size());
    const int64_t k = group.k;
    const float* probability = data + group.offset;
    const float* id = probability + n * k;
    for (int64_t i = 0; i < n; ++i) {
      std::vector<TokenScore>& row = top[group.begin + group.local[i]];
      row.reserve(k);
      for (int64_t c = 0; c < k; ++c) {
        row.push_back({static_cast<int32_t>(id[i * k + c]), probability[i * k + c]});
      }
    }
  }
  return top;
}

}  // namespace deberta::model
