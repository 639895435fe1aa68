// TorchEngine: padding, inference mode, top-k, exception translation.
#include "model/torch/torch_engine.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "model/engine_factory.h"
#include "model/runtime.h"
#include "model/status_macros.h"
#include "model/torch/heads/top_k.h"

namespace deberta::model {
namespace {

// The one place LibTorch exceptions become statuses. Out of memory is
// ResourceExhausted: CUDA's as c10::OutOfMemoryError, the CPU allocator's
// as std::bad_alloc or (LibTorch's DefaultCPUAllocator) a c10::Error that
// says "not enough memory".
absl::Status TranslateException(const std::exception& e) {
  std::string what = e.what();
  // Keep the first line; LibTorch appends a long C++ backtrace.
  if (size_t nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
  const bool out_of_memory = dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr ||
                             dynamic_cast<const std::bad_alloc*>(&e) != nullptr ||
                             what.find("not enough memory") != std::string::npos ||
                             what.find("out of memory") != std::string::npos;
  if (out_of_memory) return absl::ResourceExhaustedError(absl::StrCat("out of memory: ", what));
  return absl::InternalError(absl::StrCat("inference failed: ", what));
}

// Runs `fn` in inference mode, turning exceptions into statuses.
template <typename Fn>
auto RunGuarded(Fn&& fn) -> decltype(fn()) {
  try {
    c10::InferenceMode inference_mode;  // Per thread, so set per call.
    return fn();
  } catch (const std::exception& e) {
    return TranslateException(e);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<TorchEngine>> TorchEngine::Create(const EngineOptions& options) {
  if (options.max_logits_bytes_per_chunk <= 0) {
    return absl::InvalidArgumentError("max_logits_bytes_per_chunk must be > 0");
  }
  if (options.device_graphs && options.buckets.empty()) {
    return absl::InvalidArgumentError("device graphs are recorded per bucket: give the buckets (--buckets)");
  }
  DEBERTA_ASSIGN_OR_RETURN(LoadedNetwork loaded, LoadNetwork(options));
  for (const BatchShape& bucket : options.buckets) {
    if (bucket.length > loaded.info.max_sequence_length) {
      return absl::InvalidArgumentError(absl::StrCat("bucket ", FormatShapes({bucket}), " is longer than the ",
                                                     loaded.info.max_sequence_length,
                                                     " tokens of the longest accepted sequence"));
    }
  }
  DEBERTA_ASSIGN_OR_RETURN(std::unique_ptr<DeviceRuntime> runtime, MakeDeviceRuntime(loaded.device));
  std::vector<BatchShape> warmup = WarmupShapes(options, loaded.info.max_sequence_length);
  return std::unique_ptr<TorchEngine>(
      new TorchEngine(std::move(loaded), std::move(runtime), options, std::move(warmup)));
}

TorchEngine::TorchEngine(LoadedNetwork loaded, std::unique_ptr<DeviceRuntime> runtime, const EngineOptions& options,
                         std::vector<BatchShape> warmup_shapes)
    : loaded_(std::move(loaded)),
      runtime_(std::move(runtime)),
      num_threads_(ResolveThreadCount(options.num_threads)),
      max_logits_bytes_per_chunk_(options.max_logits_bytes_per_chunk),
      warmup_shapes_(std::move(warmup_shapes)),
      buckets_(options.buckets),
      device_graphs_(options.device_graphs),
      warmup_kernels_(options.warmup_kernels) {}

BatchShape TorchEngine::PaddedShape(BatchShape batch) const {
  return SmallestBucket(buckets_, batch).value_or(batch);
}

std::vector<BatchShape> TorchEngine::WarmupShapes(const EngineOptions& options, int64_t max_sequence_length) {
  std::vector<BatchShape> shapes = options.warmup_shapes;
  if (options.warmup_batch_tokens > 0) {
    const int64_t length = std::min(max_sequence_length, options.warmup_batch_tokens);
    const int64_t rows =
        std::clamp<int64_t>(options.warmup_batch_tokens / length, 1, std::max<int64_t>(1, options.warmup_max_batch_size));
    shapes.push_back({rows, length});
  }
  return shapes;
}

NetworkInputs TorchEngine::PadBatch(const std::vector<const Sequence*>& sequences, BatchShape shape) {
  // Positions are always 0..L-1 (docs/deberta-model.md section 2), so
  // padding goes on the right.
  const bool use_token_types = loaded_.config.type_vocab_size > 0;
  const int64_t batch = shape.batch_size, length = shape.length;
  at::Tensor ids = runtime_->HostTensor({batch, length}, at::kLong).zero_();
  at::Tensor mask = runtime_->HostTensor({batch, length}, at::kFloat).zero_();
  at::Tensor types = use_token_types ? runtime_->HostTensor({batch, length}, at::kLong).zero_() : at::Tensor();
  auto ids_a = ids.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<float, 2>();
  for (size_t b = 0; b < sequences.size(); ++b) {
    const Sequence& s = *sequences[b];
    for (size_t t = 0; t < s.token_ids.size(); ++t) {
      ids_a[b][t] = s.token_ids[t];
      mask_a[b][t] = 1.0f;
    }
    if (use_token_types) {
      auto types_a = types.accessor<int64_t, 2>();
      for (size_t t = 0; t < s.token_type_ids.size(); ++t) types_a[b][t] = s.token_type_ids[t];
    }
  }
  NetworkInputs inputs;
  inputs.input_ids = runtime_->ToDevice(ids);
  inputs.mask = runtime_->ToDevice(mask);
  if (use_token_types) inputs.token_type_ids = runtime_->ToDevice(types);
  return inputs;
}

absl::StatusOr<EncodedBatch> TorchEngine::EncodeBatch(const std::vector<const Sequence*>& sequences, const RowsWanted& rows_wanted,
                                      LastLayerPositions last) {
  const auto rows = static_cast<int64_t>(sequences.size());
  int64_t length = 0;
  for (const Sequence* s : sequences) length = std::max<int64_t>(length, s->token_ids.size());
  const BatchShape shape = PaddedShape({rows, length});
  NetworkInputs inputs = PadBatch(sequences, shape);
  inputs.rows_wanted = rows_wanted ? &rows_wanted : nullptr;
  for (const std::unique_ptr<BucketGraph>& graph : graphs_) {
    if (graph->shape() == shape) return graph->Run(inputs, rows);
  }
  DEBERTA_ASSIGN_OR_RETURN(EncodedBatch encoded, loaded_.network->Encode(inputs, last));
  KeepInputRowsBelow(rows, &encoded);
  return encoded;
}

absl::Status TorchEngine::InitializeThread() {
  // libgomp keeps a pool of workers for every thread that ever ran a
  // parallel region, and once a process holds more OpenMP threads than
  // cores it stops spinning between regions (its "throttled" spin count):
  // a 2-thread team on the batcher's thread ran a deberta-base forward 15%
  // slower while the loading thread also held one. So the loading thread
  // keeps one thread (ConfigureRuntime in main) and this one gets all.
  runtime_->EnterThread();
  at::set_num_threads(num_threads_);
  // One small forward per head on this thread, where every later batch
  // runs: allocates the first buffers, loads kernels and starts the
  // intra-op workers before the first request. Then the shapes asked for,
  // through one head (the encoder's shapes are what differ).
  DEBERTA_RETURN_IF_ERROR(WarmUp({1, 8}, /*every_head=*/true));
  if (warmup_kernels_ && loaded_.device.is_cpu()) {
    DEBERTA_RETURN_IF_ERROR(RunGuarded([&]() -> absl::Status {
      loaded_.network->WarmUpCpuKernels(loaded_.info.max_sequence_length);
      return absl::OkStatus();
    }));
  }
  // Graphs first (each recording runs its bucket once), so that the
  // warm-up shapes padded to a bucket replay its graph.
  if (device_graphs_) {
    DEBERTA_RETURN_IF_ERROR(RunGuarded([&]() -> absl::Status {
      for (const BatchShape& bucket : buckets_) {
        graphs_.push_back(BucketGraph::Record(*loaded_.network, *runtime_, bucket));
      }
      return absl::OkStatus();
    }));
  }
  std::vector<BatchShape> warmed;  // The shapes run: each warm-up shape's bucket.
  for (const BatchShape& shape : warmup_shapes_) {
    DEBERTA_RETURN_IF_ERROR(WarmUp(shape, /*every_head=*/false));
    warmed.push_back(PaddedShape({shape.batch_size, std::min(shape.length, loaded_.info.max_sequence_length)}));
  }
  // Buckets no warm-up shape ran (recorded ones ran when recorded).
  for (const BatchShape& bucket : buckets_) {
    if (device_graphs_ || std::find(warmed.begin(), warmed.end(), bucket) != warmed.end()) continue;
    DEBERTA_RETURN_IF_ERROR(WarmUp(bucket, /*every_head=*/false));
  }
  // What the warm-up freed goes back to the system (the heap is otherwise
  // never trimmed): the kernel warm-up's hundreds of transient tensors of
  // every length (+680 MiB resident in bfloat16 for a deberta-v3-base)
  // and the largest shape's activations (+230-350 MiB in every dtype),
  // which only a batch as large would use again; serving grows the heap
  // back to what its own batches need.
  if (loaded_.device.is_cpu()) {
    ReleaseFreeMemory();
    // The trim gave back the pages a small batch reuses too: without one
    // small batch after it, the first request paid their page faults (int8
    // 1 x 8 first / warm 1.20-1.25 against 0.98-1.17 with it, cold_start).
    DEBERTA_RETURN_IF_ERROR(WarmUp({1, 8}, /*every_head=*/true));
  }
  return absl::OkStatus();
}

absl::Status TorchEngine::WarmUp(const BatchShape& shape, bool every_head) {
  Sequence sequence;
  sequence.token_ids.assign(std::min(shape.length, loaded_.info.max_sequence_length), 1);
  if (loaded_.info.has_classifier) {
    std::vector<Sequence> batch(shape.batch_size, sequence);
    if (auto r = Classify(batch); !r.ok()) return r.status();
    if (!every_head) return absl::OkStatus();
  }
  if (loaded_.info.has_mlm_head) {
    std::vector<MaskedSequence> batch(shape.batch_size, MaskedSequence{sequence, {0}, 1});
    if (auto r = FillMask(batch); !r.ok()) return r.status();
    if (!every_head) return absl::OkStatus();
  }
  if (loaded_.info.has_token_classifier) {
    std::vector<Sequence> batch(shape.batch_size, sequence);
    if (auto r = ClassifyTokens(batch); !r.ok()) return r.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ClassifyOutput>> TorchEngine::RunClassify(absl::Span<const Sequence> batch,
                                                                     const RowsWanted& rows_wanted) {
  if (!loaded_.info.has_classifier) {
    return absl::FailedPreconditionError(
        "this model has no sequence-classification head (pooler.* and classifier.* weights)");
  }
  // Inputs are validated on the request path (Engine's contract); a bad id
  // here would make LibTorch throw, which RunGuarded reports.
  std::vector<const Sequence*> sequences;
  for (const Sequence& sequence : batch) sequences.push_back(&sequence);
  if (sequences.empty()) return std::vector<ClassifyOutput>{};
  return RunGuarded([&]() -> absl::StatusOr<std::vector<ClassifyOutput>> {
    // The classifier reads the last layer's first position alone.
    DEBERTA_ASSIGN_OR_RETURN(const EncodedBatch encoded,
                             EncodeBatch(sequences, rows_wanted, LastLayerPositions::kFirstOnly));
    const std::vector<int64_t>& rows = encoded.live.rows();  // The input rows computed to the end.
    at::Tensor logits = loaded_.network->ClassifierLogits(encoded).to(at::kCPU, at::kFloat).contiguous();
    at::Tensor probs;
    switch (loaded_.info.problem_type) {
      case ProblemType::kMultiLabelClassification: probs = at::sigmoid(logits); break;
      case ProblemType::kRegression: probs = logits.clone(); break;
      case ProblemType::kSingleLabelClassification: probs = at::softmax(logits, -1); break;
    }
    probs = probs.contiguous();
    const int64_t labels = logits.size(1);
    std::vector<ClassifyOutput> out(sequences.size());  // Dropped rows stay empty.
    for (size_t i = 0; i < rows.size(); ++i) {
      const float* l = logits.data_ptr<float>() + i * labels;
      const float* p = probs.data_ptr<float>() + i * labels;
      out[rows[i]].logits.assign(l, l + labels);
      out[rows[i]].probabilities.assign(p, p + labels);
    }
    return out;
  });
}

absl::StatusOr<std::vector<TokenClassifyOutput>> TorchEngine::RunClassifyTokens(absl::Span<const Sequence> batch,
                                                                                const RowsWanted& rows_wanted) {
  if (!loaded_.info.has_token_classifier) {
    return absl::FailedPreconditionError(
        "this model has no token-classification head (classifier.* without a pooler, named "
        "...ForTokenClassification in config.json's architectures, or the authors' proj.* + classifier.*)");
  }
  std::vector<const Sequence*> sequences;
  for (const Sequence& sequence : batch) sequences.push_back(&sequence);
  if (sequences.empty()) return std::vector<TokenClassifyOutput>{};
  return RunGuarded([&]() -> absl::StatusOr<std::vector<TokenClassifyOutput>> {
    DEBERTA_ASSIGN_OR_RETURN(const EncodedBatch encoded,
                             EncodeBatch(sequences, rows_wanted, LastLayerPositions::kAll));
    const std::vector<int64_t>& rows = encoded.live.rows();  // The input rows computed to the end.
    const at::Tensor logits = loaded_.network->TokenClassifierLogits(encoded).to(at::kCPU).contiguous();
    const int64_t length = logits.size(1), labels = logits.size(2);
    std::vector<TokenClassifyOutput> out(sequences.size());  // Dropped rows stay empty.
    for (size_t i = 0; i < rows.size(); ++i) {
      const int64_t positions = static_cast<int64_t>(sequences[rows[i]]->token_ids.size());
      const float* first = logits.data_ptr<float>() + i * length * labels;
      TokenClassifyOutput& output = out[rows[i]];
      output.num_labels = static_cast<int32_t>(labels);
      output.logits.assign(first, first + positions * labels);
    }
    return out;
  });
}

absl::StatusOr<std::vector<FillMaskOutput>> TorchEngine::RunFillMask(absl::Span<const MaskedSequence> batch,
                                                                     const RowsWanted& rows_wanted) {
  if (!loaded_.info.has_mlm_head) {
    return absl::FailedPreconditionError(
        "this model has no masked-LM head (lm_predictions.lm_head.* or cls.predictions.* weights)");
  }
  std::vector<const Sequence*> sequences;
  std::vector<int64_t> batch_index, position;  // One row per predicted position.
  for (size_t i = 0; i < batch.size(); ++i) {
    sequences.push_back(&batch[i].sequence);
    for (int32_t p : batch[i].positions) {
      batch_index.push_back(static_cast<int64_t>(i));
      position.push_back(p);
    }
  }
  if (sequences.empty()) return std::vector<FillMaskOutput>{};
  const int64_t vocab = loaded_.info.vocab_size;
  // Rows whose [rows, V] float32 logits fit the chunk budget.
  const int64_t chunk_rows = std::max<int64_t>(1, max_logits_bytes_per_chunk_ / (vocab * 4));
  return RunGuarded([&]() -> absl::StatusOr<std::vector<FillMaskOutput>> {
    DEBERTA_ASSIGN_OR_RETURN(EncodedBatch encoded, EncodeBatch(sequences, rows_wanted, LastLayerPositions::kAll));
    std::vector<int64_t> entries;  // Entries of batch_index/position computed.
    DEBERTA_ASSIGN_OR_RETURN(
        const at::Tensor states,
        loaded_.network->MaskedLmStates(encoded, loaded_.info.emd_enabled, batch_index, position, &entries));
    // Each row its own top_k, clamped to the vocabulary (asserted, not
    // validated, see Engine).
    std::vector<int64_t> top_k(entries.size());
    for (size_t r = 0; r < entries.size(); ++r) {
      top_k[r] = std::clamp<int64_t>(batch[batch_index[entries[r]]].top_k, 1, vocab);
    }
    std::vector<std::vector<TokenScore>> top = ChunkedTopK(
        [&](int64_t begin, int64_t end) { return loaded_.network->MaskedLmHead(states.slice(0, begin, end)); },
        top_k, chunk_rows);
    // Rows are in batch order, then position order: each sequence's
    // predictions stay in the order of its positions.
    std::vector<FillMaskOutput> out(sequences.size());  // Dropped rows stay empty.
    for (size_t r = 0; r < entries.size(); ++r) {
      out[batch_index[entries[r]]].predictions.push_back(
          {static_cast<int32_t>(position[entries[r]]), std::move(top[r])});
    }
    return out;
  });
}

absl::StatusOr<std::unique_ptr<Engine>> CreateTorchEngine(const EngineOptions& options) {
  DEBERTA_ASSIGN_OR_RETURN(std::unique_ptr<TorchEngine> engine, TorchEngine::Create(options));
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace deberta::model
