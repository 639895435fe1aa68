// BucketGraph: one bucket's embeddings and encoder, recorded once as a
// device graph (DeviceRuntime::Capture) and replayed for every batch padded
// up to that bucket (EngineOptions::buckets, device_graphs).
#ifndef DEBERTA_MODEL_TORCH_BUCKET_GRAPH_H_
#define DEBERTA_MODEL_TORCH_BUCKET_GRAPH_H_

#include <memory>

#include "absl/status/statusor.h"
#include "model/engine_options.h"
#include "model/torch/deberta_model.h"
#include "model/torch/device_runtime.h"

namespace deberta::model {

// Drops the rows of `encoded` whose input row is `rows` or later (padding
// rows, which come last in input order) from its states and context.
void KeepInputRowsBelow(int64_t rows, EncodedBatch* encoded);

// Not thread-safe: used on the engine's executor thread, as is the runtime.
class BucketGraph {
 public:
  // Allocates the bucket's input tensors on the runtime's device, runs the
  // encoder on them once (kernels chosen, libraries initialised, buffers
  // grown) and records it. `network` and `runtime` must outlive the graph.
  // Call in inference mode; throws as LibTorch does.
  static std::unique_ptr<BucketGraph> Record(const DebertaNetworkImpl& network, DeviceRuntime& runtime,
                                             BatchShape shape);

  const BatchShape& shape() const { return shape_; }

  // Copies `padded` (a batch padded to shape(), on the device) into the
  // recorded inputs, replays, and returns the encoder's output for its
  // first `rows` rows, with padded.rows_wanted for what runs after (EMD).
  // The states are views of the recorded outputs, valid until the next
  // replay of any of the engine's graphs. BatchStoppedError when no row
  // is wanted before the replay (inside it no row is dropped).
  absl::StatusOr<EncodedBatch> Run(const NetworkInputs& padded, int64_t rows);

 private:
  BatchShape shape_;
  NetworkInputs inputs_;        // The recorded inputs.
  RelativeGeometry relative_;   // The relative indices for shape_.length.
  EncodedBatch outputs_;        // The recorded outputs (reassigned by the work).
  std::unique_ptr<DeviceGraph> graph_;
};

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_BUCKET_GRAPH_H_
