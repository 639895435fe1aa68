// TorchEngine: the Engine implementation that runs DebertaNetwork in
// LibTorch. Pads each batch, runs it under InferenceMode on the engine's
// device, and turns every LibTorch exception into an absl::Status here, at
// the batch boundary.
#ifndef DEBERTA_MODEL_TORCH_TORCH_ENGINE_H_
#define DEBERTA_MODEL_TORCH_TORCH_ENGINE_H_

#include <memory>
#include <vector>

#include "model/engine.h"
#include "model/torch/bucket_graph.h"
#include "model/torch/device_runtime.h"
#include "model/torch/network_loader.h"

namespace deberta::model {

// Calls must be serialized by the caller (one executor thread, prepared by
// InitializeThread). Owns the network; nothing it returns refers to it.
class TorchEngine final : public Engine {
 public:
  static absl::StatusOr<std::unique_ptr<TorchEngine>> Create(const EngineOptions& options);

  const ModelInfo& info() const override { return loaded_.info; }
  // Makes the engine's device and stream current on the calling thread,
  // sets its intra-op thread count (a per-thread setting of LibTorch's
  // OpenMP pool) and runs one small forward per head, then (with
  // EngineOptions::warmup_kernels, on the CPU) makes the kernels of every
  // batch shape, then each warm-up
  // shape of EngineOptions through one head, then each bucket (recorded as
  // a device graph with EngineOptions::device_graphs).
  absl::Status InitializeThread() override;
  std::optional<DeviceMemoryUse> DeviceMemory() const override { return runtime_->Memory(); }

  // The shapes InitializeThread warms up after its short first batch:
  // EngineOptions' list, then the largest batch of warmup_batch_tokens at
  // the model's longest length.
  static std::vector<BatchShape> WarmupShapes(const EngineOptions& options, int64_t max_sequence_length);

  // The shape a batch of `batch.batch_size` sequences of at most
  // `batch.length` tokens runs at: its bucket, or itself when none holds it.
  BatchShape PaddedShape(BatchShape batch) const;
  // How many buckets are recorded as device graphs (after InitializeThread).
  size_t recorded_graphs() const { return graphs_.size(); }

 private:
  absl::StatusOr<std::vector<ClassifyOutput>> RunClassify(absl::Span<const Sequence> batch,
                                                          const RowsWanted& rows_wanted) override;
  absl::StatusOr<std::vector<FillMaskOutput>> RunFillMask(absl::Span<const MaskedSequence> batch,
                                                          const RowsWanted& rows_wanted) override;
  absl::StatusOr<std::vector<TokenClassifyOutput>> RunClassifyTokens(absl::Span<const Sequence> batch,
                                                                     const RowsWanted& rows_wanted) override;

  TorchEngine(LoadedNetwork loaded, std::unique_ptr<DeviceRuntime> runtime, const EngineOptions& options,
              std::vector<BatchShape> warmup_shapes);

  // One batch of `shape` through each head the model has, or through one.
  absl::Status WarmUp(const BatchShape& shape, bool every_head);

  // Right-pads the sequences into a batch of `shape` (rows past theirs are
  // all padding), staged in the runtime's host memory and copied to the
  // device once.
  NetworkInputs PadBatch(const std::vector<const Sequence*>& sequences, BatchShape shape);
  // Pads the sequences to their PaddedShape and runs the embeddings and
  // encoder: from the bucket's graph when one is recorded, else eagerly.
  // The result holds only the sequences' rows (those still wanted);
  // BatchStoppedError when none is.
  absl::StatusOr<EncodedBatch> EncodeBatch(const std::vector<const Sequence*>& sequences,
                                           const RowsWanted& rows_wanted, LastLayerPositions last);

  LoadedNetwork loaded_;
  const std::unique_ptr<DeviceRuntime> runtime_;
  const int num_threads_;  // Intra-op threads of the executor thread.
  const int64_t max_logits_bytes_per_chunk_;  // See EngineOptions.
  const std::vector<BatchShape> warmup_shapes_;  // See EngineOptions.
  const std::vector<BatchShape> buckets_;        // See EngineOptions.
  const bool device_graphs_;                     // See EngineOptions.
  const bool warmup_kernels_;                    // See EngineOptions.
  std::vector<std::unique_ptr<BucketGraph>> graphs_;  // Recorded by InitializeThread.
};

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_TORCH_ENGINE_H_
