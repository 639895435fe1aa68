// FakeEngine: deterministic outputs, batch recording, failure and blocking.
#include "tests/testing/fake_engine.h"

#include <algorithm>
#include <cmath>

namespace deberta::testing {

FakeEngine::FakeEngine() {
  info_.name = "fake";
  info_.model_type = "deberta-v2";
  info_.labels = {"a", "b", "c"};
  info_.vocab_size = 100;
  info_.max_sequence_length = 64;
  info_.device = "cpu";
  info_.dtype = "float32";
  info_.has_classifier = true;
  info_.has_mlm_head = true;
  info_.has_token_classifier = true;
}

absl::Status FakeEngine::InitializeThread() {
  absl::MutexLock lock(&mu_);
  initialized_thread_ = std::this_thread::get_id();
  batches_before_initialization_ = static_cast<int>(lengths_.size());
  return initialization_failure_;
}

std::optional<model::DeviceMemoryUse> FakeEngine::DeviceMemory() const {
  absl::MutexLock lock(&mu_);
  return device_memory_;
}

void FakeEngine::ReportDeviceMemory(std::optional<model::DeviceMemoryUse> memory) {
  absl::MutexLock lock(&mu_);
  device_memory_ = memory;
}

std::thread::id FakeEngine::initialized_thread() const {
  absl::MutexLock lock(&mu_);
  return initialized_thread_;
}

int FakeEngine::batches_before_initialization() const {
  absl::MutexLock lock(&mu_);
  return batches_before_initialization_;
}

void FakeEngine::FailInitializationWith(absl::Status status) {
  absl::MutexLock lock(&mu_);
  initialization_failure_ = std::move(status);
}

absl::Status FakeEngine::Enter(const std::vector<const model::Sequence*>& batch) {
  std::vector<int32_t> first_tokens;
  std::vector<size_t> lengths;
  for (const model::Sequence* s : batch) {
    first_tokens.push_back(s->token_ids.empty() ? -1 : s->token_ids.front());
    lengths.push_back(s->token_ids.size());
  }
  absl::MutexLock lock(&mu_);
  first_tokens_.push_back(std::move(first_tokens));
  lengths_.push_back(std::move(lengths));
  ++waiting_inside_;
  mu_.Await(absl::Condition(+[](bool* blocked) { return !*blocked; }, &blocked_));
  --waiting_inside_;
  return failure_;
}

namespace {

// Asks `rows_wanted` (all wanted when null), as an engine does between
// layers; Cancelled when no row is.
absl::StatusOr<std::vector<bool>> AskRowsWanted(const model::Engine::RowsWanted& rows_wanted, size_t rows) {
  std::vector<bool> wanted(rows, true);
  if (rows_wanted) wanted = rows_wanted();
  if (std::none_of(wanted.begin(), wanted.end(), [](bool w) { return w; })) {
    return absl::CancelledError("stopped: every caller of the batch has gone");
  }
  return wanted;
}

}  // namespace

absl::StatusOr<std::vector<model::TokenClassifyOutput>> FakeEngine::RunClassifyTokens(
    absl::Span<const model::Sequence> batch, const RowsWanted& rows_wanted) {
  std::vector<const model::Sequence*> sequences;
  for (const model::Sequence& s : batch) sequences.push_back(&s);
  if (absl::Status s = Enter(sequences); !s.ok()) return s;
  absl::StatusOr<std::vector<bool>> wanted = AskRowsWanted(rows_wanted, batch.size());
  if (!wanted.ok()) return wanted.status();
  const auto labels = static_cast<int32_t>(info_.labels.size());
  std::vector<model::TokenClassifyOutput> outputs(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!(*wanted)[i]) continue;  // Dropped: left empty.
    model::TokenClassifyOutput& out = outputs[i];
    out.num_labels = labels;
    for (int32_t id : batch[i].token_ids) {
      for (int32_t l = 0; l < labels; ++l) out.logits.push_back(l == id % labels ? 2.0f : 0.0f);
    }
  }
  return outputs;
}

absl::StatusOr<std::vector<model::ClassifyOutput>> FakeEngine::RunClassify(absl::Span<const model::Sequence> batch,
                                                                          const RowsWanted& rows_wanted) {
  std::vector<const model::Sequence*> sequences;
  for (const model::Sequence& s : batch) sequences.push_back(&s);
  if (absl::Status s = Enter(sequences); !s.ok()) return s;
  absl::StatusOr<std::vector<bool>> wanted = AskRowsWanted(rows_wanted, batch.size());
  if (!wanted.ok()) return wanted.status();
  std::vector<model::ClassifyOutput> outputs;
  for (size_t i = 0; i < batch.size(); ++i) {
    const model::Sequence& s = batch[i];
    model::ClassifyOutput out;
    if (!(*wanted)[i]) {
      outputs.push_back(std::move(out));  // Dropped: left empty.
      continue;
    }
    if (info_.labels.size() == 1) {
      out.logits = {static_cast<float>(s.token_ids.size()) / 10};
    } else {
      out.logits = {static_cast<float>(s.token_ids.front()), static_cast<float>(s.token_ids.size()),
                    static_cast<float>(s.token_ids.back())};
    }
    const float top = *std::max_element(out.logits.begin(), out.logits.end());
    float sum = 0;
    for (float l : out.logits) sum += std::exp(l - top);
    for (float l : out.logits) out.probabilities.push_back(std::exp(l - top) / sum);
    outputs.push_back(std::move(out));
  }
  return outputs;
}

absl::StatusOr<std::vector<model::FillMaskOutput>> FakeEngine::RunFillMask(
    absl::Span<const model::MaskedSequence> batch, const RowsWanted& rows_wanted) {
  std::vector<const model::Sequence*> sequences;
  for (const model::MaskedSequence& m : batch) sequences.push_back(&m.sequence);
  if (absl::Status s = Enter(sequences); !s.ok()) return s;
  absl::StatusOr<std::vector<bool>> wanted = AskRowsWanted(rows_wanted, batch.size());
  if (!wanted.ok()) return wanted.status();
  std::vector<model::FillMaskOutput> outputs;
  for (size_t i = 0; i < batch.size(); ++i) {
    const model::MaskedSequence& m = batch[i];
    model::FillMaskOutput out;
    if (!(*wanted)[i]) {
      outputs.push_back(std::move(out));  // Dropped: left empty.
      continue;
    }
    for (int32_t position : m.positions) {
      model::MaskPrediction prediction{position, {}};
      for (int32_t k = 0; k < m.top_k; ++k) {
        prediction.candidates.push_back({position + k, 1.0f / static_cast<float>(k + 2)});
      }
      out.predictions.push_back(std::move(prediction));
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

std::vector<std::vector<int32_t>> FakeEngine::BatchesByFirstToken() const {
  absl::MutexLock lock(&mu_);
  return first_tokens_;
}

std::vector<std::vector<size_t>> FakeEngine::BatchLengths() const {
  absl::MutexLock lock(&mu_);
  return lengths_;
}

int FakeEngine::batches_run() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(lengths_.size());
}

void FakeEngine::FailWith(absl::Status status) {
  absl::MutexLock lock(&mu_);
  failure_ = std::move(status);
}

void FakeEngine::Block() {
  absl::MutexLock lock(&mu_);
  blocked_ = true;
}

void FakeEngine::Unblock() {
  absl::MutexLock lock(&mu_);
  blocked_ = false;
}

void FakeEngine::AwaitBlockedBatch() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(+[](int* n) { return *n > 0; }, &waiting_inside_));
}

}  // namespace deberta::testing
