#!/usr/bin/env bash
# Two model_bench binaries side by side (A = a baseline build, B = this
# one), alternated A B A B so the VM's drift hits both; each round's rows
# and the B / A ratio per round (not only medians), every results file
# stamped with bench/provenance.py.
#
#   bench/ab_model_bench.sh A_BINARY B_BINARY OUT_DIR [model_bench flags...]
#   env: ROUNDS (2)
#
# e.g. the baseline built from another commit in a worktree:
#   git worktree add /tmp/base COMMIT && cmake -S /tmp/base -B /tmp/base/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=Release -DDEBERTA_WITH_SERVICE=OFF -DDEBERTA_BUILD_TESTS=OFF &&
#   ninja -C /tmp/base/build bench/model_bench
#   bench/ab_model_bench.sh /tmp/base/build/bench/model_bench build/bench/model_bench OUT \
#     --threads=2 --dtypes=fp32,bf16,int8 --shapes=1x128,8x128,32x64
set -euo pipefail
cd "$(dirname "$0")/.."
a=$1 b=$2 out=$3
shift 3
mkdir -p "$out"
threads=$(printf '%s\n' "$@" | sed -n 's/^--threads=//p' | tail -n 1)
for round in $(seq 1 "${ROUNDS:-2}"); do
  for side in a b; do
    binary=$a
    [[ $side == b ]] && binary=$b
    echo "ab_model_bench: round $round, $side ($binary)"
    "$binary" "$@" --benchmark_out="$out/$side-$round.json" --benchmark_out_format=json >"$out/$side-$round.txt" 2>&1
    python3 bench/provenance.py stamp --threads="${threads:-0}" "$out/$side-$round.json"
  done
done
python3 - "$out" "${ROUNDS:-2}" <<'PY' | tee "$out/table.md"
import json, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rows(path):
    return {r["name"]: r["tokens_per_s"] for r in json.load(open(path))["benchmarks"]}
a = [rows(f"{out}/a-{k}.json") for k in range(1, rounds + 1)]
b = [rows(f"{out}/b-{k}.json") for k in range(1, rounds + 1)]
print("| benchmark | " + " | ".join(f"A r{k} | B r{k} | B/A r{k}" for k in range(1, rounds + 1)) + " |")
print("|---|" + "---|---|---|" * rounds)
for name in a[0]:
    cells = []
    for k in range(rounds):
        x, y = a[k].get(name), b[k].get(name)
        cells.append(f"{x:.0f} | {y:.0f} | {y / x:.2f}" if x and y else "- | - | -")
    print(f"| {name.split('/min_time')[0]} | " + " | ".join(cells) + " |")
PY
