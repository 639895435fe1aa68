#!/usr/bin/env bash
# Our engine next to ONNX Runtime on the CPU, in one run: deberta-base (v1)
# size, random weights, the shapes of issue 12 (1x128, 8x128, 32x64),
# 2 threads. Rounds alternate the two sides back to back (ours, ORT, ours,
# ORT, ...), so the VM's drifts hit both; the table takes each engine's
# median over the rounds and the ratios of ours to ORT:
#   ours int8 / ORT int8, ours bf16 / ORT int8, ours fp32 / ORT fp32.
#
#   bench/cpu_peers.sh [OUT_DIR]     (default bench/results/cpu-peers)
#   env: BUILD (build), PEERS (../shared/peers), WORK (/var/tmp/deberta-peers: the npm
#        onnxruntime-node and the models, made once), ROUNDS (2), THREADS (2),
#        SHAPES (1x128,8x128,32x64), CONFIG (base-v1; base-v3 for deberta-v3-base),
#        DTYPES (ours: fp32,bf16,int8; fp32,int8 where bf16 runs as fp32, on a CPU
#        without AVX512-BF16: the table then shows no bf16 column figures)
#
# Ours: build/bench/model_bench (the engine's network, classification forward)
# in fp32, bf16 and int8. ORT: ../shared/peers/bench.js with onnxruntime-node
# 1.30.0 from npm, the fp32 export and its int8 dynamic quantization
# (make_models.py --int8), torch engines off. Needs python3-torch,
# python3-numpy, node and npm (scripts/install_deps.sh brings them).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-bench/results/cpu-peers}
BUILD=${BUILD:-build}
PEERS=$(cd "${PEERS:-../shared/peers}" && pwd)
WORK=${WORK:-/var/tmp/deberta-peers}
ROUNDS=${ROUNDS:-2}
THREADS=${THREADS:-2}
SHAPES=${SHAPES:-1x128,8x128,32x64}
CONFIG=${CONFIG:-base-v1}
DTYPES=${DTYPES:-fp32,bf16,int8}
PY=/usr/bin/python3  # Debian's, with its torch 1.13 (the peers' README).
mkdir -p "$OUT" "$WORK"
OUT=$(cd "$OUT" && pwd)
case $CONFIG in base-v1) ours_config=v1 ;; base-v3) ours_config=v3 ;; *) echo "CONFIG: base-v1 or base-v3" >&2; exit 2 ;; esac

if [[ ! -d $WORK/ort/node_modules/onnxruntime-node ]]; then
  mkdir -p "$WORK/ort"
  (cd "$WORK/ort" && npm init -y >/dev/null && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund onnxruntime-node@1.30.0 >/dev/null)
fi
if [[ ! -f $WORK/models/$CONFIG/model.int8.onnx ]]; then
  echo "cpu_peers: making the $CONFIG models (random weights, ONNX fp32 and int8)"
  PYTHONDONTWRITEBYTECODE=1 "$PY" "$PEERS/make_models.py" --out "$WORK/models" --configs "$CONFIG" --int8 >"$OUT/make_models.log" 2>&1
fi
cmake --build "$BUILD" --target model_bench >/dev/null

for round in $(seq 1 "$ROUNDS"); do
  echo "cpu_peers: round $round: ours ($DTYPES)"
  "$BUILD/bench/model_bench" --threads="$THREADS" --dtypes="$DTYPES" --configs="$ours_config" \
    --shapes="$SHAPES" --min_time=3 --benchmark_out="$OUT/ours-$round.json" --benchmark_out_format=json \
    >"$OUT/ours-$round.txt" 2>&1
  echo "cpu_peers: round $round: ONNX Runtime (fp32, int8)"
  (cd "$PEERS" && PYTHONDONTWRITEBYTECODE=1 node bench.js --models "$WORK/models" --ort-from "$WORK/ort" \
     --configs "$CONFIG" --shapes "$SHAPES" --variants fp32,int8 --threads "$THREADS" --torch-engines none \
     --idle-wait 60 --python "$PY" --out "$OUT/ort-$round.json" >"$OUT/ort-$round.txt" 2>&1)
done
python3 bench/provenance.py stamp --threads="$THREADS" "$OUT"/ours-*.json "$OUT"/ort-*.json
"$PY" bench/cpu_peers_table.py "$OUT" | tee "$OUT/table.md"
