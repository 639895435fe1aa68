#!/usr/bin/env bash
# Serving benchmark (issue 3, item 9): a random deberta-v3-base-size model
# on this machine's CPU; deberta-server driven by `deberta-cli bench`, the
# engine alone driven by `deberta-cli engine-bench`, all in one run.
#
#   bench/serve_bench.sh            # after scripts/test.sh (binaries in build/)
#   DURATION=30s THREADS=2 REPEATS=2 bench/serve_bench.sh
#
# Shared VMs drift by 10% and more over a minute, so every comparison runs
# its two sides back to back, REPEATS times (ABAB...), and reports the ratio
# of the summed throughputs. The idle-latency comparison also decomposes
# the server's own latency with its metrics: time in the engine (the same
# forward, in the same process, in the same run) against the whole request.
# Prints a table; the raw JSON of every run goes to $RESULTS.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
MODEL_DIR=${MODEL_DIR:-$BUILD/bench-models/deberta-v3-base-random}
DURATION=${DURATION:-20s}
REPEATS=${REPEATS:-2}
THREADS=${THREADS:-2}
DTYPE=${DTYPE:-float32}
RESULTS=${RESULTS:-$BUILD/serve_bench.json}
CLI=$BUILD/deberta-cli
SERVER=$BUILD/service/deberta-server
WORK=$(mktemp -d)
declare -A PIDS PORTS METRICS
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  "$CLI" make-random-model --shape=deberta-v3-base --out="$MODEL_DIR"
fi

# start_server NAME FLAGS...: starts on free ports and waits for SERVING.
# Servers stay up, idle, while others run.
start_server() {
  local name=$1; shift
  "$SERVER" --model="$MODEL_DIR" --listen_address=127.0.0.1 --port=0 --metrics_port=0 \
    --threads="$THREADS" --dtype="$DTYPE" "$@" >"$WORK/$name.log" 2>&1 &
  PIDS[$name]=$!
  for _ in $(seq 600); do
    grep -q "metrics on" "$WORK/$name.log" && break
    kill -0 "${PIDS[$name]}" || { cat "$WORK/$name.log"; exit 1; }
    sleep 0.1
  done
  PORTS[$name]=$(sed -n 's/.*:\([0-9]*\), metrics on :\([0-9]*\).*/\1/p' "$WORK/$name.log")
  METRICS[$name]=$(sed -n 's/.*:\([0-9]*\), metrics on :\([0-9]*\).*/\2/p' "$WORK/$name.log")
  "$CLI" health --server="127.0.0.1:${PORTS[$name]}" >/dev/null
}

# metric SERVER NAME: a classify series' value from that server's /metrics.
metric() {
  curl -s "http://127.0.0.1:${METRICS[$1]}/metrics" | awk -v n="$2{endpoint=\"classify\"}" '$1 == n { print $2 }'
}

# bench SERVER RUN CONCURRENCY MIN MAX: one load run; also records what the
# server counted during it (padding, real tokens, time in the engine).
bench() {
  local server=$1 run=$2 concurrency=$3 min=$4 max=$5
  local names=(deberta_padding_tokens_total deberta_real_tokens_total
               deberta_inference_duration_seconds_sum deberta_inference_duration_seconds_count)
  local before=() after=()
  for n in "${names[@]}"; do before+=("$(metric "$server" "$n")"); done
  "$CLI" bench --server="127.0.0.1:${PORTS[$server]}" --concurrency="$concurrency" --min_len="$min" \
    --max_len="$max" --duration="$DURATION" --json >"$WORK/$run.json"
  for n in "${names[@]}"; do after+=("$(metric "$server" "$n")"); done
  python3 - "${before[@]}" "${after[@]}" >"$WORK/$run.server.json" <<'PY'
import json, sys
v = [float(x) for x in sys.argv[1:]]
b, a = v[:4], v[4:]
print(json.dumps({"padding_tokens": a[0] - b[0], "real_tokens": a[1] - b[1],
                  "inference_seconds": a[2] - b[2], "batches": a[3] - b[3]}))
PY
}

engine_bench() {
  local run=$1 batch=$2 min=$3 max=$4
  "$CLI" engine-bench --model="$MODEL_DIR" --threads="$THREADS" --dtype="$DTYPE" --batch_size="$batch" \
    --min_len="$min" --max_len="$max" --duration="$DURATION" --json >"$WORK/$run.json"
}

start_server default
start_server cpu --max_batch_size=8
start_server batch1 --max_batch_size=1
start_server cpu_first_come --max_batch_size=8 --batching=first_come

for i in $(seq "$REPEATS"); do
  echo "round $i: overhead at concurrency 32 ..." >&2
  engine_bench "engine_b32.$i" 32 32 128
  bench default "server_c32.$i" 32 32 128
  echo "round $i: idle latency ..." >&2
  engine_bench "engine_b1.$i" 1 64 64
  bench default "server_c1.$i" 1 64 64
  echo "round $i: batching short sequences ..." >&2
  bench batch1 "short_batch1.$i" 32 16 64
  bench cpu "short_batched.$i" 32 16 64
  engine_bench "engine_short_b1.$i" 1 16 64
  engine_bench "engine_short_b8.$i" 8 16 64
done
echo "padding: length-aware vs first-come ..." >&2
bench cpu mixed_length_aware 64 16 256
bench cpu_first_come mixed_first_come 64 16 256

python3 - "$WORK" "$RESULTS" "$DURATION" "$THREADS" "$DTYPE" "$REPEATS" <<'PY'
import json, os, sys
work, results, duration, threads, dtype, repeats = sys.argv[1:]
runs = {name[:-5]: json.load(open(os.path.join(work, name))) for name in os.listdir(work) if name.endswith(".json")}
rounds = range(1, int(repeats) + 1)
def total(run, key):
    return sum(runs[f"{run}.{i}"][0][key] for i in rounds)
def ratio(a, b, key="tokens_per_s"):
    return total(a, key) / total(b, key)
def waste(run):
    s = runs[run + ".server"]
    return s["padding_tokens"] / max(1.0, s["real_tokens"])
def mean(run, key):
    return total(run, key) / len(rounds)
in_engine_ms = sum(runs[f"server_c1.{i}.server"]["inference_seconds"] for i in rounds) * 1000 / \
    sum(runs[f"server_c1.{i}.server"]["batches"] for i in rounds)
rows = [
    ("tokens/s, server at concurrency 32 / engine alone in batches of 32 (32-128 tokens, default flags)",
     f'{mean("server_c32", "tokens_per_s"):.0f} / {mean("engine_b32", "tokens_per_s"):.0f}',
     f'{ratio("server_c32", "engine_b32"):.2f}', ">= 0.8"),
    ("tokens/s, dynamic batching (<= 8) / batch size 1, concurrency 32 (16-64 tokens)",
     f'{mean("short_batched", "tokens_per_s"):.0f} / {mean("short_batch1", "tokens_per_s"):.0f}',
     f'{ratio("short_batched", "short_batch1"):.2f}', ">= 1.5"),
    ("  the engine's own ceiling: batches of 8 / batch size 1, offline (16-64 tokens)",
     f'{mean("engine_short_b8", "tokens_per_s"):.0f} / {mean("engine_short_b1", "tokens_per_s"):.0f}',
     f'{ratio("engine_short_b8", "engine_short_b1"):.2f}', ""),
    ("padding per real token, length-aware / first-come, concurrency 64, batches <= 8 (16-256 tokens)",
     f'{waste("mixed_length_aware"):.3f} / {waste("mixed_first_come"):.3f}',
     f'{waste("mixed_length_aware") / max(1e-9, waste("mixed_first_come")):.2f}', "<= 0.5"),
    ("latency at concurrency 1, p50 minus engine-alone p50, ms (64 tokens, separate processes)",
     f'{mean("server_c1", "p50_ms"):.2f} - {mean("engine_b1", "p50_ms"):.2f}',
     f'{mean("server_c1", "p50_ms") - mean("engine_b1", "p50_ms"):+.2f}', "<= 2 ms"),
    ("latency at concurrency 1, mean request minus mean time in the engine, same server, ms",
     f'{mean("server_c1", "mean_ms"):.2f} - {in_engine_ms:.2f}',
     f'{mean("server_c1", "mean_ms") - in_engine_ms:+.2f}', "<= 2 ms"),
]
print(f"random deberta-v3-base, CPU, {threads} threads, {dtype}, {duration} per run, {repeats} rounds (ABAB)")
print("| comparison | measured | ratio / difference | target |")
print("|---|---|---|---|")
for name, measured, value, target in rows:
    print(f"| {name} | {measured} | {value} | {target} |")
errors = {k: v[0]["errors"] for k, v in runs.items() if isinstance(v, list) and v[0]["errors"]}
print("errors:", errors if errors else "none")
json.dump(runs, open(results, "w"), indent=1)
PY
python3 bench/provenance.py stamp --threads="$THREADS" "$RESULTS"
echo "raw results: $RESULTS" >&2
