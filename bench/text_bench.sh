#!/usr/bin/env bash
# Tokenization's share of a batch-1 request (issue 9, item 8), in one run:
# encoding a 128-token text with each golden tokenizer on one core
# (tokenize_bench), against the batch-1 forward of 128 tokens of a
# deberta-base-size model on THREADS cores (model_bench), back to back.
#
#   bench/text_bench.sh            # after scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
THREADS=${THREADS:-2}
"$BUILD/bench/tokenize_bench" --benchmark_format=console --benchmark_min_time=1
"$BUILD/bench/model_bench" --threads="$THREADS" \
  --benchmark_filter='Classify/deberta_base_v[13]/fp32/batch:1/len:128'
