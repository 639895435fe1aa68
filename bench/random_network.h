// Random-weight networks of real sizes for the model benchmarks:
// deberta-base (v1) and deberta-v3-base configurations, weights drawn as
// at initialization (normal(0, 0.02), LayerNorm weights 1) from a fixed
// seed, so two networks of one config hold the same weights.
#ifndef DEBERTA_BENCH_RANDOM_NETWORK_H_
#define DEBERTA_BENCH_RANDOM_NETWORK_H_

#include <string>

#include "model/torch/deberta_model.h"

namespace deberta::model {

// "v1" (deberta-base: 50265 tokens, relative attention c2p|p2c) or "v3"
// (deberta-v3-base: 128100 tokens, 256 log buckets, shared keys); both
// 768 hidden, 12 layers and heads, FFN 3072, three labels.
DebertaConfig BaseConfig(const std::string& which);

// A network of `config` with the parts asked for, random weights, on the
// CPU, not yet prepared (the caller moves it and calls Prepare).
DebertaNetwork RandomNetwork(const DebertaConfig& config, const NetworkParts& parts);

}  // namespace deberta::model

#endif  // DEBERTA_BENCH_RANDOM_NETWORK_H_
