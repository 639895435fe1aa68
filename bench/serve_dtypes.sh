#!/usr/bin/env bash
# Through the server against the engine alone, in each dtype (issue 12,
# item 5): `deberta-cli bench` at concurrency 16 on 128-token sequences
# against `deberta-cli engine-bench` in batches of 16 of the same
# sequences, on a random deberta-v3-base, this machine's CPU. And the
# server's resident memory (issue 33, item 6): once it serves (after its
# warm-up), and the highest of its samples every 50 ms under the load
# (memory-DTYPE.json).
#
#   bench/serve_dtypes.sh [OUT]       # after the build (binaries in build/)
#   DTYPES="float32 int8" DURATION=20s REPEATS=3 THREADS=2 bench/serve_dtypes.sh
#
# The VM drifts 10-20% within minutes, so each dtype's two sides run back
# to back, REPEATS times (ABAB), the server idle while the engine runs;
# the ratio is of the summed rates. Prints a table; the raw JSON of every
# run goes to OUT (default build/serve-dtypes).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
MODEL_DIR=${MODEL_DIR:-$BUILD/bench-models/deberta-v3-base-random}
DTYPES=${DTYPES:-float32 bfloat16 int8}
DURATION=${DURATION:-20s}
REPEATS=${REPEATS:-2}
THREADS=${THREADS:-2}
OUT=$(realpath -m "${1:-$BUILD/serve-dtypes}")
CLI=$BUILD/deberta-cli
SERVER=$BUILD/service/deberta-server
mkdir -p "$OUT"
# shellcheck source=bench/server_process.sh
source bench/server_process.sh
# A process's resident memory now (VmRSS), KiB.
resident_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  "$CLI" make-random-model --shape=deberta-v3-base --out="$MODEL_DIR"
fi

for dtype in $DTYPES; do
  log=$OUT/server-$dtype.log
  start_server "$log" --model="$MODEL_DIR" --threads="$THREADS" --dtype="$dtype" --max_batch_size=16
  port=$SERVER_PORT
  "$CLI" health --server="127.0.0.1:$port" >/dev/null
  after_warmup=$(resident_kib "$SERVER_PID")
  peak=$after_warmup
  for i in $(seq "$REPEATS"); do
    echo "$dtype round $i: engine alone, then the server ..." >&2
    "$CLI" engine-bench --model="$MODEL_DIR" --threads="$THREADS" --dtype="$dtype" --batch_size=16 \
      --min_len=128 --max_len=128 --duration="$DURATION" --json >"$OUT/engine-$dtype.$i.json"
    "$CLI" bench --server="127.0.0.1:$port" --concurrency=16 --min_len=128 --max_len=128 \
      --duration="$DURATION" --json >"$OUT/server-$dtype.$i.json" &
    bench_pid=$!
    while kill -0 "$bench_pid" 2>/dev/null; do
      now=$(resident_kib "$SERVER_PID")
      [ "$now" -gt "$peak" ] && peak=$now
      sleep 0.05
    done
    wait "$bench_pid"
  done
  printf '{"dtype": "%s", "resident_after_warmup_kib": %s, "resident_peak_under_load_kib": %s, "concurrency": 16}\n' \
    "$dtype" "$after_warmup" "$peak" >"$OUT/memory-$dtype.json"
  stop_server
done

python3 - "$OUT" "$DTYPES" "$REPEATS" "$THREADS" "$DURATION" <<'PY'
import json, os, sys
out, dtypes, repeats, threads, duration = sys.argv[1:]
rounds = range(1, int(repeats) + 1)
def runs(side, dtype):
    return [json.load(open(os.path.join(out, f"{side}-{dtype}.{i}.json")))[0] for i in rounds]
print(f"random deberta-v3-base, CPU, {threads} threads, 128-token sequences, {duration} per run, "
      f"{repeats} rounds (ABAB)")
print("| dtype | engine alone, batches of 16, tokens/s | server, concurrency 16, tokens/s | ratio (per round) "
      "| errors | resident after warm-up, MiB | peak under load, MiB | peak / after warm-up |")
print("|---|---|---|---|---|---|---|---|")
memory = {}
for dtype in dtypes.split():
    engine, server = runs("engine", dtype), runs("server", dtype)
    e = sum(r["tokens_per_s"] for r in engine) / len(engine)
    s = sum(r["tokens_per_s"] for r in server) / len(server)
    per_round = ", ".join(f"{b['tokens_per_s'] / a['tokens_per_s']:.2f}" for a, b in zip(engine, server))
    errors = {k: v for r in engine + server for k, v in r["errors"].items()}
    m = memory[dtype] = json.load(open(os.path.join(out, f"memory-{dtype}.json")))
    after, peak = m["resident_after_warmup_kib"] / 1024, m["resident_peak_under_load_kib"] / 1024
    print(f"| {dtype} | {e:.0f} | {s:.0f} | {s / e:.2f} ({per_round}) | {errors or 'none'} | {after:.0f} | {peak:.0f} "
          f"| {peak / after:.2f} |")
for dtype in ("bfloat16", "int8"):
    if dtype in memory and "float32" in memory:
        for key, what in (("resident_after_warmup_kib", "after warm-up"), ("resident_peak_under_load_kib", "peak")):
            print(f"{dtype} / float32 resident, {what}: {memory[dtype][key] / memory['float32'][key]:.2f}")
PY
python3 bench/provenance.py stamp --threads="$THREADS" "$OUT"/*.json
