#!/usr/bin/env bash
# Cold start (issue 33, item 4): the first batch of each of a spread of
# shapes against the same batch once warm, in each dtype, with the
# server's warm-up three ways: none but the first short sequence; the
# kernel warm-up alone (--warmup_kernels); and the server's default (the
# kernels and the largest batch the batcher forms: --max_batch_tokens
# 8192 of 512-token sequences). Each line names the warm-up's time and
# the resident memory before and after it.
#
#   bench/cold_start.sh [OUT]      # after the build; random deberta-v3-base
#   DTYPES="int8" SHAPES=1x8,16x128 THREADS=2 bench/cold_start.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MODEL_DIR=${MODEL_DIR:-$BUILD/bench-models/deberta-v3-base-random}
DTYPES=${DTYPES:-float32 bfloat16 int8}
THREADS=${THREADS:-2}
# Batch sizes and lengths the batcher forms: small and large, row counts
# on and off the row grid (model/torch/row_grid.h), up to the model's 512.
SHAPES=${SHAPES:-1x8,1x77,1x128,5x33,3x200,8x64,13x97,16x128,32x32,2x300,1x512,4x512}
OUT=$(realpath -m "${1:-bench/results/cold-start}")
mkdir -p "$OUT"
if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  "$BUILD/deberta-cli" make-random-model --shape=deberta-v3-base --out="$MODEL_DIR"
fi
: >"$OUT/cold_start.txt"
for dtype in $DTYPES; do
  for warmup in "" "--warm_kernels" "--warm_kernels --warm_batch_tokens=8192"; do
    # shellcheck disable=SC2086  # $warmup: flags, or none.
    "$BUILD/bench/cold_start" --model="$MODEL_DIR" --dtype="$dtype" --threads="$THREADS" --shapes="$SHAPES" \
      $warmup | tee -a "$OUT/cold_start.txt"
  done
done
python3 bench/provenance.py stamp --threads="$THREADS" "$OUT/cold_start.txt"
