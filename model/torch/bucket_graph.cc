// BucketGraph: recorded inputs, one eager run, capture, replay.
#include "model/torch/bucket_graph.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace deberta::model {

void KeepInputRowsBelow(int64_t rows, EncodedBatch* encoded) {
  AttentionContext& ctx = encoded->ctx;
  // ctx.rows is in input order, so the rows kept are a prefix.
  const auto kept = static_cast<int64_t>(
      std::lower_bound(ctx.rows.begin(), ctx.rows.end(), rows) - ctx.rows.begin());
  if (kept == static_cast<int64_t>(ctx.rows.size())) return;
  ctx.rows.resize(kept);
  ctx.mask = ctx.mask.narrow(0, 0, kept);
  ctx.key_bias = ctx.key_bias.narrow(0, 0, kept);
  for (at::Tensor& state : encoded->states) state = state.narrow(0, 0, kept);
}

std::unique_ptr<BucketGraph> BucketGraph::Record(const DebertaNetworkImpl& network, DeviceRuntime& runtime,
                                                 BatchShape shape) {
  auto graph = std::unique_ptr<BucketGraph>(new BucketGraph());
  graph->shape_ = shape;
  const c10::Device device = network.deberta->embeddings->word_embeddings->weight.device();
  const auto options = at::TensorOptions().device(device);
  const std::vector<int64_t> sizes{shape.batch_size, shape.length};
  graph->inputs_.input_ids = at::zeros(sizes, options.dtype(at::kLong));
  graph->inputs_.mask = at::ones(sizes, options.dtype(at::kFloat));
  if (network.config().type_vocab_size > 0) graph->inputs_.token_type_ids = at::zeros(sizes, options.dtype(at::kLong));
  // Host work (the index tables) before the capture, which allows none.
  graph->relative_ = MakeRelativeContext(network.config(), shape.length, device);
  BucketGraph* g = graph.get();
  auto work = [g, &network] { g->outputs_ = network.EncodeForCapture(g->inputs_, g->relative_); };
  work();
  graph->graph_ = runtime.Capture(work);
  return graph;
}

EncodedBatch BucketGraph::Run(const NetworkInputs& padded, int64_t rows) {
  if (padded.rows_wanted != nullptr) {
    const std::vector<bool> wanted = (*padded.rows_wanted)();
    if (std::none_of(wanted.begin(), wanted.end(), [](bool w) { return w; })) throw BatchStopped();
  }
  inputs_.input_ids.copy_(padded.input_ids);
  inputs_.mask.copy_(padded.mask);
  if (inputs_.token_type_ids.defined()) inputs_.token_type_ids.copy_(padded.token_type_ids);
  graph_->Replay();
  EncodedBatch encoded = outputs_;
  KeepInputRowsBelow(rows, &encoded);
  encoded.ctx.rows_wanted = padded.rows_wanted;
  return encoded;
}

}  // namespace deberta::model
