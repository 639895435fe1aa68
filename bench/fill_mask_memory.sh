#!/usr/bin/env bash
# Memory of a server under the heaviest fill-mask requests its limits allow
# (issue 14, item 1): a random deberta-v3-base-size model (vocabulary
# 128,100), bursts of concurrent requests of one 512-token sequence with
# 510 masks and top_k 100 (65 M logits, 51,000 candidates each). Prints the
# server's resident memory after warm-up, its peak, and after each burst;
# then sends the request that used to kill it (top_k = the vocabulary) and
# one over the logits budget, which must be refused.
#
#   bench/fill_mask_memory.sh                      # after scripts/test.sh
#   SERVER=/path/to/deberta-server BURSTS=3 CLIENTS=8 bench/fill_mask_memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
SERVER=${SERVER:-$BUILD/service/deberta-server}
CLI=${CLI:-$BUILD/deberta-cli}
MODEL_DIR=${MODEL_DIR:-$BUILD/bench-models/deberta-v3-base-random}
BURSTS=${BURSTS:-3}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
WORK=$(mktemp -d)
trap 'kill -TERM $PID 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT

if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  "$CLI" make-random-model --shape=deberta-v3-base --out="$MODEL_DIR"
fi
"$SERVER" --model="$MODEL_DIR" --listen_address=127.0.0.1 --port=0 --metrics_port=-1 \
  --threads="$THREADS" --max_batch_size=8 >"$WORK/server.log" 2>&1 &
PID=$!
for _ in $(seq 600); do
  grep -q "metrics on" "$WORK/server.log" && break
  kill -0 $PID || { cat "$WORK/server.log"; exit 1; }
  sleep 0.1
done
PORT=$(sed -n 's/.*:\([0-9]*\), metrics on .*/\1/p' "$WORK/server.log")
rss() { awk -v k="$1:" '$1 == k { printf "%.0f MB", $2 / 1024 }' /proc/$PID/status; }

# [CLS], 510 masks (id 4), [SEP].
MASKED="1$(printf ' 4%.0s' $(seq 510)) 2"
echo "after warm-up: RSS $(rss VmRSS)"
for b in $(seq "$BURSTS"); do
  start=$(date +%s.%N)
  for _ in $(seq "$CLIENTS"); do
    "$CLI" fill-mask --server="127.0.0.1:$PORT" --sequences="$MASKED" --top_k=100 >/dev/null &
  done
  wait $(jobs -p | grep -v "^$PID$") 2>/dev/null || true
  echo "burst $b ($CLIENTS x 510 masks, top_k 100) in $(python3 -c "import time; print(round(time.time() - $start, 1))") s:" \
       "RSS $(rss VmRSS), peak $(rss VmHWM)"
done
for case in "top_k = vocabulary|--top_k=128100" ; do
  if "$CLI" fill-mask --server="127.0.0.1:$PORT" --sequences="$MASKED" "${case#*|}" >/dev/null 2>"$WORK/err"; then
    echo "FAIL: ${case%%|*} was answered"; exit 1
  fi
  echo "${case%%|*}: refused: $(cat "$WORK/err")"
done
SIXTEEN=$(for _ in $(seq 16); do printf '%s;' "$MASKED"; done)
SIXTEEN=${SIXTEEN%;}  # No empty 17th group: the CLI would refuse it before the server saw it.
if "$CLI" fill-mask --server="127.0.0.1:$PORT" --sequences="$SIXTEEN" --top_k=1 >/dev/null 2>"$WORK/err"; then
  echo "FAIL: 16 x 510 masks was answered"; exit 1
fi
# Refused by the server's logits budget, not for another reason.
grep -q "INVALID_ARGUMENT\|RESOURCE_EXHAUSTED" "$WORK/err" || { echo "FAIL: 16 x 510 masks: $(cat "$WORK/err")"; exit 1; }
echo "16 x 510 masks, top_k 1: refused: $(cat "$WORK/err")"
kill -0 $PID && echo "server alive: RSS $(rss VmRSS), peak $(rss VmHWM)"
