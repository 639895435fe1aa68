// Batch formation as pure functions over a snapshot of queued sequence
// lengths, so it is tested without threads or clocks.
//
// Why by length: a batch is padded to its longest sequence, and padded
// tokens cost as much compute as real ones. Grouping similar lengths keeps
// padding small; counting *padded* tokens (size x longest) against the
// budget bounds the real cost of a batch.
#ifndef DEBERTA_SERVICE_BATCH_FORMATION_H_
#define DEBERTA_SERVICE_BATCH_FORMATION_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace deberta::service {

struct BatchLimits {
  size_t max_batch_size = 32;      // Sequences.
  int64_t max_batch_tokens = 8192; // Padded tokens: size x longest.
};

// Chooses one batch from queued sequences given by `lengths` in arrival
// order (index 0 is the oldest). The oldest sequence is always included,
// so every task makes progress; the others are those closest to it in
// length, grown outward in length order while the batch stays within
// `limits`. Returns the chosen indices in arrival order. Empty input gives
// an empty result; a single sequence over the token budget is returned alone.
std::vector<size_t> FormLengthAwareBatch(const std::vector<int64_t>& lengths,
                                         const BatchLimits& limits);

// First-come formation for comparison: the oldest sequences in order, as
// many as the limits allow.
std::vector<size_t> FormFirstComeBatch(const std::vector<int64_t>& lengths,
                                       const BatchLimits& limits);

// Padded tokens of a batch: size x longest.
int64_t PaddedTokens(const std::vector<int64_t>& lengths, const std::vector<size_t>& batch);

}  // namespace deberta::service

#endif  // DEBERTA_SERVICE_BATCH_FORMATION_H_
