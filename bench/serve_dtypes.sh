#!/usr/bin/env bash
# Through the server against the engine alone, in each dtype (issue 12,
# item 5): `deberta-cli bench` at concurrency 16 on 128-token sequences
# against `deberta-cli engine-bench` in batches of 16 of the same
# sequences, on a random deberta-v3-base, this machine's CPU.
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
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" || true; fi
}
trap cleanup EXIT

if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  "$CLI" make-random-model --shape=deberta-v3-base --out="$MODEL_DIR"
fi

for dtype in $DTYPES; do
  log=$OUT/server-$dtype.log
  "$SERVER" --model="$MODEL_DIR" --listen_address=127.0.0.1 --port=0 --metrics_port=0 \
    --threads="$THREADS" --dtype="$dtype" --max_batch_size=16 >"$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1800); do
    grep -q "metrics on" "$log" && break
    kill -0 "$SERVER_PID" || { cat "$log"; exit 1; }
    sleep 0.1
  done
  port=$(sed -n 's/.*:\([0-9]*\), metrics on :.*/\1/p' "$log")
  "$CLI" health --server="127.0.0.1:$port" >/dev/null
  for i in $(seq "$REPEATS"); do
    echo "$dtype round $i: engine alone, then the server ..." >&2
    "$CLI" engine-bench --model="$MODEL_DIR" --threads="$THREADS" --dtype="$dtype" --batch_size=16 \
      --min_len=128 --max_len=128 --duration="$DURATION" --json >"$OUT/engine-$dtype.$i.json"
    "$CLI" bench --server="127.0.0.1:$port" --concurrency=16 --min_len=128 --max_len=128 \
      --duration="$DURATION" --json >"$OUT/server-$dtype.$i.json"
  done
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID" || { echo "server ($dtype) did not exit cleanly" >&2; exit 1; }
  SERVER_PID=
done

python3 - "$OUT" "$DTYPES" "$REPEATS" "$THREADS" "$DURATION" <<'PY'
import json, os, sys
out, dtypes, repeats, threads, duration = sys.argv[1:]
rounds = range(1, int(repeats) + 1)
def runs(side, dtype):
    return [json.load(open(os.path.join(out, f"{side}-{dtype}.{i}.json")))[0] for i in rounds]
print(f"random deberta-v3-base, CPU, {threads} threads, 128-token sequences, {duration} per run, "
      f"{repeats} rounds (ABAB)")
print("| dtype | engine alone, batches of 16, tokens/s | server, concurrency 16, tokens/s | ratio | errors |")
print("|---|---|---|---|---|")
for dtype in dtypes.split():
    engine, server = runs("engine", dtype), runs("server", dtype)
    e = sum(r["tokens_per_s"] for r in engine) / len(engine)
    s = sum(r["tokens_per_s"] for r in server) / len(server)
    errors = {k: v for r in engine + server for k, v in r["errors"].items()}
    print(f"| {dtype} | {e:.0f} | {s:.0f} | {s / e:.2f} | {errors or 'none'} |")
PY
python3 bench/provenance.py stamp --threads="$THREADS" "$OUT"/*.json
