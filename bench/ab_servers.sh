#!/usr/bin/env bash
# Two deberta-server binaries side by side (e.g. before and after a change),
# on the same random deberta-v3-base-size model, in one run: both servers
# stay up, and `deberta-cli bench` loads them in turn, A B A B..., at each
# concurrency level. Prints one line per run and the summed B/A ratios.
#
#   SERVER_A=/tmp/base/build/service/deberta-server bench/ab_servers.sh
#   SERVER_B=... CONCURRENCY="1 32" DURATION=15s REPEATS=2 bench/ab_servers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
SERVER_A=${SERVER_A:?set SERVER_A to the baseline deberta-server}
SERVER_B=${SERVER_B:-$BUILD/service/deberta-server}
CLI=${CLI:-$BUILD/deberta-cli}
MODEL_DIR=${MODEL_DIR:-$BUILD/bench-models/deberta-v3-base-random}
CONCURRENCY=${CONCURRENCY:-"1 32"}
DURATION=${DURATION:-15s}
REPEATS=${REPEATS:-2}
THREADS=${THREADS:-2}
WORK=$(mktemp -d)
declare -A PIDS PORTS
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  "$CLI" make-random-model --shape=deberta-v3-base --out="$MODEL_DIR"
fi

start() {  # start NAME BINARY
  "$2" --model="$MODEL_DIR" --listen_address=127.0.0.1 --port=0 --metrics_port=-1 \
    --threads="$THREADS" --max_batch_size=8 >"$WORK/$1.log" 2>&1 &
  PIDS[$1]=$!
  for _ in $(seq 600); do
    grep -q "metrics on" "$WORK/$1.log" && break
    kill -0 "${PIDS[$1]}" || { cat "$WORK/$1.log"; exit 1; }
    sleep 0.1
  done
  PORTS[$1]=$(sed -n 's/.*:\([0-9]*\), metrics on .*/\1/p' "$WORK/$1.log")
}
start A "$SERVER_A"
start B "$SERVER_B"

for c in $CONCURRENCY; do
  declare -A SUM=([A]=0 [B]=0)
  for r in $(seq "$REPEATS"); do
    for side in A B; do
      line=$("$CLI" bench --server="127.0.0.1:${PORTS[$side]}" --concurrency="$c" --duration="$DURATION" \
        --min_len=16 --max_len=64 --vocab=1000 --json | tr -d '\n')
      tps=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1])[0]; print(r["tokens_per_s"], r["p50_ms"], r["mean_ms"])' "$line")
      echo "concurrency $c run $r $side: tokens/s p50_ms mean_ms = $tps"
      SUM[$side]=$(python3 -c "print(${SUM[$side]} + ${tps%% *})")
    done
  done
  python3 -c "print(f'concurrency $c: B/A summed tokens/s = {${SUM[B]}:.1f}/{${SUM[A]}:.1f} = {${SUM[B]}/${SUM[A]}:.3f}')"
done
