#!/usr/bin/env bash
# Text end to end (issue 33, item 5): `deberta-cli bench --send_text` at
# concurrency 16 against `deberta-cli engine-bench --send_text` in batches
# of 16, on a random deberta-v3-base with real-size tokenizers (128k
# SentencePiece pieces, 50k GPT-2 merges; bench/make_bench_tokenizers.cc
# trains them once, on made-up text). Both sides run the same texts (random
# ids of the tokenizer's vocabulary, decoded) through the same request
# builder, and count tokens alike: each text's tokens as the server counts
# them (num_tokens: the whole text, special tokens included), so the ratio
# is what tokenization, the RPCs, batching and windows cost on top of the
# engine. Cases:
#   short: 128-id texts (about 128 tokens each), one sequence per text;
#   long:  2,000-id texts in windows of 512 tokens overlapping by 128.
#
#   bench/text_serve.sh [OUT]          # after the build (binaries in build/)
#   TOKENIZERS=spm-128k DTYPES=int8 CASES=long REPEATS=3 bench/text_serve.sh
#
# The VM drifts within minutes, so each case's two sides run back to back,
# REPEATS times (ABAB), the server idle while the engine runs. Prints a
# table (also OUT/table.md); the raw JSON of every run goes to OUT
# (default build/text-serve).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
BASE_MODEL=${BASE_MODEL:-$BUILD/bench-models/deberta-v3-base-random}
TOKENIZER_DIR=${TOKENIZER_DIR:-$BUILD/bench-tokenizers}
TOKENIZERS=${TOKENIZERS:-spm-128k gpt2-50k}
DTYPES=${DTYPES:-float32 bfloat16 int8}
CASES=${CASES:-short long}
DURATION=${DURATION:-20s}
LONG_DURATION=${LONG_DURATION:-40s}
REPEATS=${REPEATS:-2}
THREADS=${THREADS:-2}
OUT=$(realpath -m "${1:-$BUILD/text-serve}")
CLI=$BUILD/deberta-cli
SERVER=$BUILD/service/deberta-server
mkdir -p "$OUT"
# shellcheck source=bench/server_process.sh
source bench/server_process.sh

case_flags() {
  case $1 in
    short) echo "--min_len=128 --max_len=128 --duration=$DURATION" ;;
    # A long request waits for its windows and the 15 other clients' (80
    # windows of 512 tokens: over 30 s in float32 on 2 cores): no deadline.
    long) echo "--min_len=2000 --max_len=2000 --max_length=512 --windows --stride=128 --duration=$LONG_DURATION" \
      "--deadline=600s" ;;
    *) echo "unknown case $1" >&2; return 1 ;;
  esac
}

if [ ! -f "$BASE_MODEL/model.safetensors" ]; then
  "$CLI" make-random-model --shape=deberta-v3-base --out="$BASE_MODEL"
fi
if [ ! -f "$TOKENIZER_DIR/spm-128k/spm.model" ] || [ ! -f "$TOKENIZER_DIR/gpt2-50k/merges.txt" ]; then
  "$BUILD/bench/make_bench_tokenizers" "$TOKENIZER_DIR"
fi
# Which tokenizers ran: their files' digests.
(cd "$TOKENIZER_DIR" && sha256sum spm-128k/spm.model gpt2-50k/vocab.json gpt2-50k/merges.txt) >"$OUT/tokenizers.sha256"

for tokenizer in $TOKENIZERS; do
  # The random network with this tokenizer's files (its 128,100 ids hold
  # either vocabulary).
  model=$BUILD/bench-models/v3-base-$tokenizer
  mkdir -p "$model"
  cp "$BASE_MODEL/config.json" "$model/"
  ln -sf "$(realpath "$BASE_MODEL/model.safetensors")" "$model/model.safetensors"
  cp "$TOKENIZER_DIR/$tokenizer"/* "$model/"
  for dtype in $DTYPES; do
    log=$OUT/server-$tokenizer-$dtype.log
    start_server "$log" --model="$model" --threads="$THREADS" --dtype="$dtype" --max_batch_size=16
    port=$SERVER_PORT
    "$CLI" health --server="127.0.0.1:$port" >/dev/null
    for case in $CASES; do
      # shellcheck disable=SC2046  # The flags are words.
      for i in $(seq "$REPEATS"); do
        name=$tokenizer-$dtype-$case.$i
        echo "$name: engine alone, then the server ..." >&2
        "$CLI" engine-bench --model="$model" --threads="$THREADS" --dtype="$dtype" --batch_size=16 --send_text \
          $(case_flags "$case") --json >"$OUT/engine-$name.json"
        # (Exit code 1: some requests failed; the table shows which.)
        rc=0
        "$CLI" bench --server="127.0.0.1:$port" --concurrency=16 --send_text $(case_flags "$case") \
          --json >"$OUT/server-$name.json" || rc=$?
        [ "$rc" -le 1 ] || exit "$rc"
      done
    done
    stop_server
  done
done

python3 - "$OUT" "$TOKENIZERS" "$DTYPES" "$CASES" "$REPEATS" "$THREADS" >"$OUT/table.md" <<'PY'
import json, os, statistics, sys
out, tokenizers, dtypes, cases, repeats, threads = sys.argv[1:]
target = {"short": 0.9, "long": 0.85}
print(f"random deberta-v3-base, CPU, {threads} threads, {repeats} rounds (ABAB); engine alone in batches of 16, "
      "server at concurrency 16; tokens/s of text tokens as the server counts them")
print("| tokenizer | dtype | case | engine tokens/s | server tokens/s | server / engine per round (median) "
      "| target | errors |")
print("|---|---|---|---|---|---|---|---|")
for tokenizer in tokenizers.split():
    for dtype in dtypes.split():
        for case in cases.split():
            def runs(side):
                return [json.load(open(os.path.join(out, f"{side}-{tokenizer}-{dtype}-{case}.{i}.json")))[0]
                        for i in range(1, int(repeats) + 1)]
            engine, server = runs("engine"), runs("server")
            ratios = [s["tokens_per_s"] / e["tokens_per_s"] for e, s in zip(engine, server)]
            errors = {k: v for r in engine + server for k, v in r["errors"].items()}
            met = "met" if min(ratios) >= target[case] else "missed"
            print(f"| {tokenizer} | {dtype} | {case} | {statistics.mean(r['tokens_per_s'] for r in engine):.0f} "
                  f"| {statistics.mean(r['tokens_per_s'] for r in server):.0f} "
                  f"| {', '.join(f'{r:.2f}' for r in ratios)} ({statistics.median(ratios):.2f}) "
                  f"| {target[case]} ({met}) | {errors or 'none'} |")
PY
cat "$OUT/table.md"
python3 bench/provenance.py stamp --threads="$THREADS" "$OUT"/*.json "$OUT/table.md"
