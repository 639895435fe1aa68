// BucketGraph: recorded inputs, one eager run, capture, replay.
#include "model/torch/bucket_graph.h"

#include <ATen/ATen.h>

#include "model/status_macros.h"

namespace deberta::model {

void KeepInputRowsBelow(int64_t rows, EncodedBatch* encoded) {
  const size_t before = encoded->live.rows().size();
  const int64_t kept = encoded->live.KeepBelow(rows);
  if (static_cast<size_t>(kept) == before) return;
  encoded->ctx.padding = encoded->ctx.padding.FirstRows(kept);
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
  graph->relative_ = MakeRelativeGeometry(network.config(), shape.length, device);
  BucketGraph* g = graph.get();
  auto work = [g, &network] { g->outputs_ = network.EncodeForCapture(g->inputs_, g->relative_); };
  work();
  graph->graph_ = runtime.Capture(work);
  return graph;
}

absl::StatusOr<EncodedBatch> BucketGraph::Run(const NetworkInputs& padded, int64_t rows) {
  // The replay computes every row: it runs only if one is still wanted.
  DEBERTA_RETURN_IF_ERROR(LiveRows(shape_.batch_size, padded.rows_wanted).CheckAnyWanted());
  inputs_.input_ids.copy_(padded.input_ids);
  inputs_.mask.copy_(padded.mask);
  if (inputs_.token_type_ids.defined()) inputs_.token_type_ids.copy_(padded.token_type_ids);
  graph_->Replay();
  EncodedBatch encoded = outputs_;
  encoded.live = LiveRows(shape_.batch_size, padded.rows_wanted);  // Asked from here on (EMD).
  KeepInputRowsBelow(rows, &encoded);
  return encoded;
}

}  // namespace deberta::model
