// TorchEngine: the Engine implementation that runs DebertaNetwork in
// LibTorch. Pads each batch, runs it under InferenceMode on the engine's
// device, and turns every LibTorch exception into an absl::Status here, at
// the batch boundary.
#ifndef DEBERTA_MODEL_TORCH_TORCH_ENGINE_H_
#define DEBERTA_MODEL_TORCH_TORCH_ENGINE_H_

#include <memory>

#include "model/engine.h"
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
  // OpenMP pool) and runs one small forward per head, then each warm-up
  // shape of EngineOptions through one head.
  absl::Status InitializeThread() override;
  std::optional<DeviceMemoryUse> DeviceMemory() const override { return runtime_->Memory(); }

  // The shapes InitializeThread warms up after its short first batch:
  // EngineOptions' list, then the largest batch of warmup_batch_tokens at
  // the model's longest length.
  static std::vector<BatchShape> WarmupShapes(const EngineOptions& options, int64_t max_sequence_length);
 private:
  absl::StatusOr<std::vector<ClassifyOutput>> RunClassify(absl::Span<const Sequence> batch,
                                                          const RowsWanted& rows_wanted) override;
  absl::StatusOr<std::vector<FillMaskOutput>> RunFillMask(absl::Span<const MaskedSequence> batch,
                                                          const RowsWanted& rows_wanted) override;

  TorchEngine(LoadedNetwork loaded, std::unique_ptr<DeviceRuntime> runtime, int num_threads,
              int64_t max_logits_bytes_per_chunk, std::vector<BatchShape> warmup_shapes)
      : loaded_(std::move(loaded)),
        runtime_(std::move(runtime)),
        num_threads_(num_threads),
        max_logits_bytes_per_chunk_(max_logits_bytes_per_chunk),
        warmup_shapes_(std::move(warmup_shapes)) {}



  // One batch of `shape` through each head the model has, or through one.
  absl::Status WarmUp(const BatchShape& shape, bool every_head);

  // Right-pads the sequences into one batch, staged in the runtime's host
  // memory and copied to the device once.
  NetworkInputs PadBatch(const std::vector<const Sequence*>& sequences);

  LoadedNetwork loaded_;
  const std::unique_ptr<DeviceRuntime> runtime_;
  const int num_threads_;  // Intra-op threads of the executor thread.
  const int64_t max_logits_bytes_per_chunk_;  // See EngineOptions.
  const std::vector<BatchShape> warmup_shapes_;  // See EngineOptions.
};

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_TORCH_ENGINE_H_
