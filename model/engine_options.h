// EngineOptions: what to load and where to run it. Torch-free.
#ifndef DEBERTA_MODEL_ENGINE_OPTIONS_H_
#define DEBERTA_MODEL_ENGINE_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deberta::model {

// Precision of the matrix multiplications. LayerNorm, softmax and the
// attention scores always run in float32 (docs/deberta-model.md section 6.4, 12.6).
// kInt8 (CPU): the encoder's linear layers in int8 with activations
// quantized at run time, everything else in float32.
enum class ComputeDType { kFloat32, kBFloat16, kFloat16, kInt8 };

absl::StatusOr<ComputeDType> ParseComputeDType(absl::string_view name);
const char* ComputeDTypeName(ComputeDType dtype);  // "float32", "bfloat16", "float16", "int8"

// Which masked-LM computation fill-mask uses (docs/deberta-model.md section 9.3).
enum class EmdMode {
  kAuto,   // EMD iff the checkpoint was trained with it (docs/deberta-model.md section 9.3 rule).
  kEmd,    // Always the Enhanced Mask Decoder; error if the model cannot.
  kPlain,  // Always the LM head on the last layer (Hugging Face behaviour).
};

absl::StatusOr<EmdMode> ParseEmdMode(absl::string_view name);
const char* EmdModeName(EmdMode mode);  // "auto", "emd", "plain"

// A batch's shape: sequences x tokens (after padding to the longest).
struct BatchShape {
  int64_t batch_size = 1;
  int64_t length = 1;
  bool operator==(const BatchShape& o) const { return batch_size == o.batch_size && length == o.length; }
};

// "16x128,1x64" -> shapes, in order; InvalidArgument naming the bad item.
// Empty text gives no shapes.
absl::StatusOr<std::vector<BatchShape>> ParseShapes(absl::string_view text);
std::string FormatShapes(const std::vector<BatchShape>& shapes);  // "16x128,1x64"

// The bucket a batch of `batch` sequences of at most `length` tokens is
// padded up to: of the buckets at least that large in both, the one with
// the fewest tokens (then the shortest); nullopt when none holds it.
std::optional<BatchShape> SmallestBucket(const std::vector<BatchShape>& buckets, BatchShape batch);

struct EngineOptions {
  // A folder holding config.json and model.safetensors, or "demo" for the
  // built-in deterministic random model.
  std::string model = "demo";
  // "cpu" or "cuda:N" (also "cuda", meaning cuda:0).
  std::string device = "cpu";
  ComputeDType dtype = ComputeDType::kFloat32;
  // Intra-op threads for CPU kernels. 0 means one per available core.
  // LibTorch's own default is 1 on some machines, so it is always set.
  int num_threads = 0;
  EmdMode emd = EmdMode::kAuto;
  // Longest accepted sequence in tokens. 0 means the model's own limit
  // (max_position_embeddings). Larger values than the model's are an error.
  int64_t max_sequence_length = 0;
  // Fill-mask runs the LM head (a product with the whole vocabulary) on at
  // most this many bytes of float32 logits at a time, in chunks of
  // predicted positions, so its transient memory is bounded whatever the
  // batch: 32 MiB is 65 positions of a 128k vocabulary. REQUIRES: > 0.
  int64_t max_logits_bytes_per_chunk = 32 << 20;
  // Batches run once on the executor thread before the first request
  // (InitializeThread), through one head, after one short sequence through
  // each: the
  // first batch of a shape is slower than later ones (kernels chosen and
  // buffers grown for it). Shapes longer than max_sequence_length are
  // clamped to it.
  std::vector<BatchShape> warmup_shapes;
  // > 0: also warm up the largest batch the batcher can form with this many
  // padded tokens: sequences of the longest accepted length, as many as fit
  // (at least 1, at most warmup_max_batch_size). Measured: the first large
  // batch of a process ran 1.2-1.5x its warm time (memory grown and touched
  // once); later shapes 1.0-1.2x (bench/cold_start.cc).
  int64_t warmup_batch_tokens = 0;
  int64_t warmup_max_batch_size = 1;
  // On the CPU, before the warm-up shapes: oneDNN's kernels made for the
  // batch shapes whose first batch would wait longest for them
  // (DebertaNetwork::WarmUpCpuKernels), so that it runs near its warm
  // time. The rest of
  // the first-call cost of a shape (LibTorch's, the allocator's) is what
  // the shapes above warm. Seconds of start-up (docs/server.md); off here,
  // on in the server (--warmup_kernels).
  bool warmup_kernels = false;
  // Fixed batch shapes: a batch that fits one is padded up to the smallest
  // that holds it (SmallestBucket; extra rows and tokens are padding, so
  // answers do not change); a batch that fits none runs as it is. Each
  // bucket is warmed up. Empty: every batch runs at its own shape. Lengths
  // must not exceed the longest accepted sequence.
  std::vector<BatchShape> buckets;
  // Each bucket's embeddings and encoder recorded once at warm-up as a
  // device graph and replayed for every batch padded to it (see
  // DeviceRuntime::Capture): on CUDA a CUDA graph, one launch for the
  // whole encoder instead of one per kernel. On the CPU the same
  // static-buffer path with the work rerun, which only tests use (the
  // --cuda_graphs flag asks for a CUDA device). Rows whose callers have
  // gone are not dropped inside a graph (only before it, and in EMD).
  // Needs buckets.
  bool device_graphs = false;
};

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_ENGINE_OPTIONS_H_
