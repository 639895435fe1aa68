// model::Engine: the torch-free interface between the service and a DeBERTa
// model. Plain vectors in, plain vectors out; no tensors cross it, so code
// that uses it (the batcher, the gRPC service, their tests) never compiles
// or links LibTorch.
#ifndef DEBERTA_MODEL_ENGINE_H_
#define DEBERTA_MODEL_ENGINE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/problem_type.h"

namespace deberta::model {

// What a loaded model is; fixed for the engine's lifetime.
struct ModelInfo {
  std::string name;          // Folder name of the checkpoint, or "demo".
  std::string model_type;    // "deberta" or "deberta-v2".
  std::string description;   // Human-readable; says so for the demo model.
  bool is_demo = false;      // Random weights: outputs carry no meaning.
  std::vector<std::string> labels;  // Classifier labels in id order.
  // config.json's problem_type: how ClassifyOutput::probabilities are made.
  ProblemType problem_type = ProblemType::kSingleLabelClassification;
  int64_t vocab_size = 0;
  int64_t type_vocab_size = 0;      // 0: token type ids are ignored.
  int64_t max_sequence_length = 0;  // Longest accepted sequence, tokens.
  int64_t num_layers = 0;
  int64_t hidden_size = 0;
  std::string device;        // "cpu" or "cuda:N".
  std::string dtype;         // "float32", "bfloat16" or "float16".
  bool has_classifier = false;
  bool has_mlm_head = false;
  // A token-classification head (docs/tasks.md 1.1): ClassifyTokens, with
  // `labels` its labels.
  bool has_token_classifier = false;
  bool emd_enabled = false;  // Fill-mask uses the Enhanced Mask Decoder.
  // On the CPU: the processor, its usable instruction sets and the
  // kernels chosen (model/torch/cpu_backend.h); empty on a GPU.
  std::string cpu_kernels;
};

// A device allocator's memory, in bytes: what live tensors use, and what
// the allocator holds from the device (used plus its cache).
struct DeviceMemoryUse {
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
};

// One input sequence: token ids as the tokenizer produced them (special
// tokens included). `token_type_ids` is empty or as long as `token_ids`.
struct Sequence {
  std::vector<int32_t> token_ids;
  std::vector<int32_t> token_type_ids;
};

struct ClassifyOutput {
  std::vector<float> logits;         // One per label, in label-id order.
  // Scores by ModelInfo::problem_type: softmax(logits) for
  // single_label_classification, sigmoid of each logit for
  // multi_label_classification, the logits themselves for regression.
  std::vector<float> probabilities;
};

// Token classification of one sequence: the logits of every position,
// special tokens included, row by row: logits[p * num_labels + l].
struct TokenClassifyOutput {
  int32_t num_labels = 0;
  std::vector<float> logits;
};

// A fill-mask input: the sequence, the positions to predict and how many
// candidates to return for each.
struct MaskedSequence {
  Sequence sequence;
  std::vector<int32_t> positions;  // 0-based, each < token_ids.size().
  int32_t top_k = 5;               // 1 <= top_k <= vocab_size.
};

struct TokenScore {
  int32_t token_id = 0;
  float probability = 0;  // softmax over the vocabulary at that position.
};

struct MaskPrediction {
  int32_t position = 0;
  std::vector<TokenScore> candidates;  // Highest probability first.
};

struct FillMaskOutput {
  std::vector<MaskPrediction> predictions;  // In the order of `positions`.
};

// Runs DeBERTa on batches. Calls are serialized by the caller (the batcher
// has one executor thread per engine); implementations need not be
// thread-safe. Batches may mix sequence lengths: the engine pads them.
// Any failure of a batch is reported as a status for the whole batch; no
// exception escapes.
//
// The executor thread: a caller that runs batches on one thread calls
// InitializeThread on that thread before its first batch (the batcher does
// so in Batcher::Start), as CTranslate2's ReplicaWorker::initialize. Per-
// thread settings live there: LibTorch's intra-op thread count is a per-
// thread setting, and the first forward's buffers and kernels are best
// made on the thread that keeps using them. Without it, batches still run,
// with the calling thread's defaults.
//
// Inputs: every sequence satisfies ValidateSequence (fill-mask inputs
// ValidateMaskedSequence). The service checks this once on the request
// path; engines may assert it but need not check it again.
class Engine {
 public:
  virtual ~Engine() = default;

  virtual const ModelInfo& info() const = 0;

  // Prepares the calling thread to run every later batch, and warms up.
  // Called once, before the first batch. The default does nothing.
  virtual absl::Status InitializeThread() { return absl::OkStatus(); }

  // The engine's device memory (GPU engines), for the metrics; nullopt
  // where there is none to report (the CPU). Any thread may call it.
  virtual std::optional<DeviceMemoryUse> DeviceMemory() const { return std::nullopt; }

  // Which rows of the batch still have a caller: one flag per input, in
  // order. Engines ask between layers and stop computing the rows no longer
  // wanted (their outputs come back empty), so abandoned work stops costing
  // time; once no row is wanted they return Cancelled. A row once unwanted
  // must stay so. Null: every row is wanted.
  using RowsWanted = std::function<std::vector<bool>()>;

  // Sequence classification: one output per input, in order.
  // InvalidArgument for a bad sequence (see ValidateSequence),
  // FailedPrecondition if the model has no classification head.
  absl::StatusOr<std::vector<ClassifyOutput>> Classify(absl::Span<const Sequence> batch,
                                                       const RowsWanted& rows_wanted = nullptr) {
    return RunClassify(batch, rows_wanted);
  }

  // Masked-token prediction: one output per input, in order.
  absl::StatusOr<std::vector<FillMaskOutput>> FillMask(absl::Span<const MaskedSequence> batch,
                                                       const RowsWanted& rows_wanted = nullptr) {
    return RunFillMask(batch, rows_wanted);
  }

  // Token classification: one output per input, in order.
  // FailedPrecondition if the model has no token-classification head.
  absl::StatusOr<std::vector<TokenClassifyOutput>> ClassifyTokens(absl::Span<const Sequence> batch,
                                                                  const RowsWanted& rows_wanted = nullptr) {
    return RunClassifyTokens(batch, rows_wanted);
  }

 protected:
  // What Classify, FillMask and ClassifyTokens run.
  virtual absl::StatusOr<std::vector<ClassifyOutput>> RunClassify(absl::Span<const Sequence> batch,
                                                                  const RowsWanted& rows_wanted) = 0;
  virtual absl::StatusOr<std::vector<FillMaskOutput>> RunFillMask(absl::Span<const MaskedSequence> batch,
                                                                  const RowsWanted& rows_wanted) = 0;
  virtual absl::StatusOr<std::vector<TokenClassifyOutput>> RunClassifyTokens(absl::Span<const Sequence> batch,
                                                                             const RowsWanted& rows_wanted) = 0;
};

// Checks one sequence against the model's limits: non-empty, no longer than
// max_sequence_length, ids within the vocabulary, token types matching in
// length and within type_vocab_size (when the model uses them). The message
// names the offending position and value. The service calls this for every
// request sequence, so that one bad sequence never fails a whole batch.
absl::Status ValidateSequence(const ModelInfo& info, const Sequence& sequence);

// ValidateSequence plus the fill-mask fields: at least one position, each
// in range and unique, 1 <= top_k <= vocab_size.
absl::Status ValidateMaskedSequence(const ModelInfo& info, const MaskedSequence& input);

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_ENGINE_H_
