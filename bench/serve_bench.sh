#!/usr/bin/env bash
# Serving benchmark (issue 3, item 9): a random deberta-v3-base-size model
# on this machine's CPU, deberta-server driven by `deberta-cli bench`, and
# the engine alone driven by `deberta-cli engine-bench`, all in one run.
#
#   bench/serve_bench.sh            # after scripts/test.sh or a build in build/
#   DURATION=30s THREADS=2 bench/serve_bench.sh
#
# Prints one table of the four comparisons and writes the raw JSON of
# every run to $RESULTS (default build/serve_bench.json).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
MODEL_DIR=${MODEL_DIR:-$BUILD/bench-models/deberta-v3-base-random}
DURATION=${DURATION:-20s}
THREADS=${THREADS:-2}
DTYPE=${DTYPE:-float32}
RESULTS=${RESULTS:-$BUILD/serve_bench.json}
CLI=$BUILD/deberta-cli
SERVER=$BUILD/service/deberta-server
WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  "$CLI" make-random-model --shape=deberta-v3-base --out="$MODEL_DIR"
fi

# start_server NAME FLAGS...: starts on free ports, waits for SERVING.
start_server() {
  local name=$1; shift
  "$SERVER" --model="$MODEL_DIR" --listen_address=127.0.0.1 --port=0 --metrics_port=0 \
    --threads="$THREADS" --dtype="$DTYPE" "$@" >"$WORK/$name.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 600); do
    if grep -q "metrics on" "$WORK/$name.log"; then break; fi
    kill -0 "$SERVER_PID" || { cat "$WORK/$name.log"; exit 1; }
    sleep 0.1
  done
  PORT=$(sed -n 's/.*:\([0-9]*\), metrics on :\([0-9]*\).*/\1/p' "$WORK/$name.log")
  METRICS_PORT=$(sed -n 's/.*:\([0-9]*\), metrics on :\([0-9]*\).*/\2/p' "$WORK/$name.log")
  "$CLI" health --server="127.0.0.1:$PORT" >/dev/null
}

stop_server() {
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID"
  SERVER_PID=""
}

# counter NAME: a classify counter's value from /metrics.
counter() {
  curl -s "http://127.0.0.1:$METRICS_PORT/metrics" |
    awk -v n="$1{endpoint=\"classify\"}" '$1 == n { print $2 }'
}

# bench RUN CONCURRENCY MIN MAX: one load run; also records the padding and
# real tokens the server counted during it.
bench() {
  local run=$1 concurrency=$2 min=$3 max=$4
  local pad0 real0
  pad0=$(counter deberta_padding_tokens_total); real0=$(counter deberta_real_tokens_total)
  "$CLI" bench --server="127.0.0.1:$PORT" --concurrency="$concurrency" --min_len="$min" --max_len="$max" \
    --duration="$DURATION" --json >"$WORK/$run.json"
  echo "{\"padding_tokens\": $(( $(counter deberta_padding_tokens_total) - pad0 )),"\
       "\"real_tokens\": $(( $(counter deberta_real_tokens_total) - real0 ))}" >"$WORK/$run.tokens.json"
}

engine_bench() {
  local run=$1 batch=$2 min=$3 max=$4
  "$CLI" engine-bench --model="$MODEL_DIR" --threads="$THREADS" --dtype="$DTYPE" --batch_size="$batch" \
    --min_len="$min" --max_len="$max" --duration="$DURATION" --json >"$WORK/$run.json"
}

echo "engine alone ..." >&2
engine_bench engine_b32 32 32 128
engine_bench engine_b1 1 64 64

# Overhead and idle latency: the server's default batch size, 32, as the
# engine's batches.
echo "server, default flags ..." >&2
start_server default
bench server_c32 32 32 128
bench server_c1 1 64 64
stop_server

# Batching gains with the CPU overlay's flags (deploy/kubernetes/overlays/cpu):
# on two cores, batches of 8 short sequences already keep the matrix units
# busy, and larger ones mostly add padding. Formation only matters when
# more sequences wait than fit in one batch (64 clients here).
echo "server, CPU flags, length-aware ..." >&2
start_server cpu_length_aware --max_batch_size=8
bench short_batched 32 16 64
bench mixed_length_aware 64 16 256
stop_server

echo "server, CPU flags, first-come ..." >&2
start_server cpu_first_come --max_batch_size=8 --batching=first_come
bench mixed_first_come 64 16 256
stop_server

echo "server, batch size 1 ..." >&2
start_server batch1 --max_batch_size=1
bench short_batch1 32 16 64
stop_server

python3 - "$WORK" "$RESULTS" "$DURATION" "$THREADS" "$DTYPE" <<'PY'
import json, os, sys
work, results, duration, threads, dtype = sys.argv[1:]
runs = {}
for name in os.listdir(work):
    if name.endswith(".json"):
        runs[name[:-5]] = json.load(open(os.path.join(work, name)))
def r(name): return runs[name][0]
def waste(name):
    t = runs[name + ".tokens"]
    return t["padding_tokens"] / max(1, t["real_tokens"])
rows = [
    ("server c=32 tokens/s vs engine batch 32 (32-128 tokens)",
     f'{r("server_c32")["tokens_per_s"]:.0f} vs {r("engine_b32")["tokens_per_s"]:.0f}',
     r("server_c32")["tokens_per_s"] / r("engine_b32")["tokens_per_s"], ">= 0.8"),
    ("dynamic batching (batches <= 8) vs batch size 1, c=32 (16-64 tokens), tokens/s",
     f'{r("short_batched")["tokens_per_s"]:.0f} vs {r("short_batch1")["tokens_per_s"]:.0f}',
     r("short_batched")["tokens_per_s"] / r("short_batch1")["tokens_per_s"], ">= 1.5"),
    ("padding per real token, length-aware vs first-come, c=64, batches <= 8 (16-256 tokens)",
     f'{waste("mixed_length_aware"):.3f} vs {waste("mixed_first_come"):.3f}',
     waste("mixed_length_aware") / max(1e-9, waste("mixed_first_come")), "<= 0.5"),
    ("c=1 p50 latency minus engine batch-1 p50 (64 tokens), ms",
     f'{r("server_c1")["p50_ms"]:.2f} - {r("engine_b1")["p50_ms"]:.2f}',
     r("server_c1")["p50_ms"] - r("engine_b1")["p50_ms"], "<= 2 ms"),
]
print(f"random deberta-v3-base, CPU, {threads} threads, {dtype}, {duration} per run")
print("| comparison | measured | ratio / difference | target |")
print("|---|---|---|---|")
for name, measured, value, target in rows:
    print(f"| {name} | {measured} | {value:.2f} | {target} |")
errors = {k: v[0]["errors"] for k, v in runs.items() if isinstance(v, list) and v[0]["errors"]}
print("errors:", errors if errors else "none")
json.dump(runs, open(results, "w"), indent=1)
PY
echo "raw results: $RESULTS" >&2
