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

namespace deberta::model {
namespace {

// Right-pads `sequences` into one batch on `device` (docs/deberta-model.md section 2: positions are
// always 0..L-1, so padding goes on the right).
NetworkInputs PadBatch(const std::vector<const Sequence*>& sequences, bool use_token_types,
                       const c10::Device& device) {
  const int64_t batch = static_cast<int64_t>(sequences.size());
  int64_t length = 0;
  for (const Sequence* s : sequences) length = std::max<int64_t>(length, s->token_ids.size());
  at::Tensor ids = at::zeros({batch, length}, at::kLong);
  at::Tensor mask = at::zeros({batch, length}, at::kFloat);
  at::Tensor types = use_token_types ? at::zeros({batch, length}, at::kLong) : at::Tensor();
  auto ids_a = ids.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<float, 2>();
  for (int64_t b = 0; b < batch; ++b) {
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
  inputs.input_ids = ids.to(device);
  inputs.mask = mask.to(device);
  if (use_token_types) inputs.token_type_ids = types.to(device);
  return inputs;
}

// The one place LibTorch exceptions become statuses.
absl::Status TranslateException(const std::exception& e) {
  std::string what = e.what();
  // Keep the first line; LibTorch appends a long C++ backtrace.
  if (size_t nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
  if (what.find("out of memory") != std::string::npos) {
    return absl::ResourceExhaustedError(absl::StrCat("device out of memory: ", what));
  }
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
  DEBERTA_ASSIGN_OR_RETURN(LoadedNetwork loaded, LoadNetwork(options));
  return std::unique_ptr<TorchEngine>(
      new TorchEngine(std::move(loaded), ResolveThreadCount(options.num_threads)));
}

absl::Status TorchEngine::InitializeThread() {
  // libgomp keeps a pool of workers for every thread that ever ran a
  // parallel region, and once a process holds more OpenMP threads than
  // cores it stops spinning between regions (its "throttled" spin count):
  // a 2-thread team on the batcher's thread ran a deberta-base forward 15%
  // slower while the loading thread also held one. So the loading thread
  // keeps one thread (ConfigureRuntime(1) in main) and this one gets all.
  at::set_num_threads(num_threads_);
  // One small forward per head on this thread, where every later batch
  // runs: allocates the first buffers, loads kernels and starts the
  // intra-op workers before the first request.
  Sequence sequence;
  sequence.token_ids.assign(std::min<int64_t>(8, loaded_.info.max_sequence_length), 1);
  if (loaded_.info.has_classifier) {
    if (auto r = Classify({sequence}); !r.ok()) return r.status();
  }
  if (loaded_.info.has_mlm_head) {
    MaskedSequence masked{sequence, {0}, 1};
    if (auto r = FillMask({masked}); !r.ok()) return r.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ClassifyOutput>> TorchEngine::Classify(absl::Span<const Sequence> batch) {
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
    NetworkInputs inputs = PadBatch(sequences, loaded_.config.type_vocab_size > 0, loaded_.device);
    at::Tensor logits = loaded_.network->ClassifierLogits(inputs).to(at::kCPU, at::kFloat).contiguous();
    at::Tensor probs = at::softmax(logits, -1).contiguous();
    const int64_t labels = logits.size(1);
    std::vector<ClassifyOutput> out(sequences.size());
    for (size_t b = 0; b < out.size(); ++b) {
      const float* l = logits.data_ptr<float>() + b * labels;
      const float* p = probs.data_ptr<float>() + b * labels;
      out[b].logits.assign(l, l + labels);
      out[b].probabilities.assign(p, p + labels);
    }
    return out;
  });
}

absl::StatusOr<std::vector<FillMaskOutput>> TorchEngine::FillMask(
    absl::Span<const MaskedSequence> batch) {
  if (!loaded_.info.has_mlm_head) {
    return absl::FailedPreconditionError(
        "this model has no masked-LM head (lm_predictions.lm_head.* or cls.predictions.* weights)");
  }
  std::vector<const Sequence*> sequences;
  std::vector<int64_t> batch_index, position;
  int32_t max_k = 1;
  for (size_t i = 0; i < batch.size(); ++i) {
    sequences.push_back(&batch[i].sequence);
    for (int32_t p : batch[i].positions) {
      batch_index.push_back(static_cast<int64_t>(i));
      position.push_back(p);
    }
    max_k = std::max(max_k, batch[i].top_k);
  }
  // Asserted, not validated (see Engine): top_k never reads past the vocabulary.
  max_k = std::min<int32_t>(max_k, static_cast<int32_t>(loaded_.info.vocab_size));
  if (sequences.empty()) return std::vector<FillMaskOutput>{};
  return RunGuarded([&]() -> absl::StatusOr<std::vector<FillMaskOutput>> {
    NetworkInputs inputs = PadBatch(sequences, loaded_.config.type_vocab_size > 0, loaded_.device);
    const int64_t rows = static_cast<int64_t>(position.size());
    at::Tensor b_idx = at::from_blob(batch_index.data(), {rows}, at::kLong).to(loaded_.device);
    at::Tensor p_idx = at::from_blob(position.data(), {rows}, at::kLong).to(loaded_.device);
    at::Tensor logits =
        loaded_.network->MaskedLmLogits(inputs, loaded_.info.emd_enabled, b_idx, p_idx);
    auto [top_p, top_id] = at::softmax(logits.to(at::kFloat), -1).topk(max_k, -1);
    top_p = top_p.to(at::kCPU).contiguous();
    top_id = top_id.to(at::kCPU).contiguous();
    std::vector<FillMaskOutput> out(sequences.size());
    for (int64_t r = 0; r < rows; ++r) {
      const MaskedSequence& input = batch[batch_index[r]];
      MaskPrediction prediction;
      prediction.position = static_cast<int32_t>(position[r]);
      for (int32_t c = 0; c < std::min(input.top_k, max_k); ++c) {
        prediction.candidates.push_back(
            {static_cast<int32_t>(top_id.data_ptr<int64_t>()[r * max_k + c]),
             top_p.data_ptr<float>()[r * max_k + c]});
      }
      out[batch_index[r]].predictions.push_back(std::move(prediction));
    }
    return out;
  });
}

absl::StatusOr<std::unique_ptr<Engine>> CreateTorchEngine(const EngineOptions& options) {
  DEBERTA_ASSIGN_OR_RETURN(std::unique_ptr<TorchEngine> engine, TorchEngine::Create(options));
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace deberta::model
