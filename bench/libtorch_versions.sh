#!/usr/bin/env bash
# The engine on Debian 12's LibTorch 1.13 (this machine's build) next to
# Debian 13's LibTorch 2.6 (the build tree of the CUDA image's test stage,
# localhost/deberta-serve:cuda-test, computing on the CPU), rounds
# alternating back to back: model_bench,
# deberta-base (v1) size, random weights, fp32 / bf16 / int8, 2 threads.
#
#   bench/libtorch_versions.sh [OUT_DIR]   (default bench/results/libtorch-versions)
#   env: BUILD (build), ROUNDS (2), THREADS (2), SHAPES (1x128,8x128,32x64)
# Needs `scripts/image_test.sh --cuda` to have run (it tags that image).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $(id -u) -ne 0 ]]; then exec sudo -E "$0" "$@"; fi
OUT=${1:-bench/results/libtorch-versions}
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-2}
THREADS=${THREADS:-2}
SHAPES=${SHAPES:-1x128,8x128,32x64}
source scripts/podman_env.sh
IMAGE=localhost/deberta-serve:cuda-test
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ARGS=(--threads="$THREADS" --dtypes=fp32,bf16,int8 --configs=v1 --shapes="$SHAPES" --min_time=3
      --benchmark_out_format=json)
cmake --build "$BUILD" --target model_bench >/dev/null
# The test image's build tree has no benchmarks: add model_bench, once, to a derived image.
BENCH_IMAGE=localhost/deberta-serve:cuda-bench
podman rm -f deberta-bench-build >/dev/null 2>&1 || true
podman run --name deberta-bench-build --network host "$IMAGE" sh -c \
  'cmake -S /src -B /build -DDEBERTA_BUILD_BENCH=ON >/dev/null && cmake --build /build --target model_bench >/dev/null'
podman commit -q deberta-bench-build "$BENCH_IMAGE" >/dev/null
podman rm deberta-bench-build >/dev/null
for round in $(seq 1 "$ROUNDS"); do
  echo "libtorch_versions: round $round: LibTorch 1.13 (Debian 12)"
  "$BUILD/bench/model_bench" "${ARGS[@]}" --benchmark_out="$OUT/libtorch-1.13-$round.json" >/dev/null 2>&1
  echo "libtorch_versions: round $round: LibTorch 2.6 (Debian 13)"
  podman run --rm --network host -v "$OUT:/out" "$BENCH_IMAGE" \
    /build/bench/model_bench "${ARGS[@]}" --benchmark_out="/out/libtorch-2.6-$round.json" >/dev/null 2>&1
done
# Each side's provenance where it ran (the container's LibTorch and oneDNN).
python3 bench/provenance.py stamp --threads="$THREADS" "$OUT"/libtorch-1.13-*.json
dirty=false
[[ -n $(git status --porcelain --untracked-files=no) ]] && dirty=true
podman run --rm --network host -v "$PWD:/repo:ro" -v "$OUT:/out" -e DEBERTA_COMMIT="$(git rev-parse HEAD)" \
  -e DEBERTA_DIRTY="$dirty" -e THREADS="$THREADS" "$BENCH_IMAGE" \
  sh -c 'python3 /repo/bench/provenance.py stamp --threads="$THREADS" /out/libtorch-2.6-*.json'
python3 - "$OUT" <<'PY' | tee "$OUT/table.md"
import glob, json, os, statistics, sys
out = sys.argv[1]
rates = {}
for path in sorted(glob.glob(os.path.join(out, "libtorch-*.json"))):
    version = os.path.basename(path).split("-")[1]
    for b in json.load(open(path))["benchmarks"]:
        _, _, dtype, batch, length = b["name"].split("/")[:5]
        shape = batch.split(":")[1] + "x" + length.split(":")[1]
        rates.setdefault((dtype, shape), {}).setdefault(version, []).append(b["tokens_per_s"])
print("tokens/s, median over the rounds [each round]; ratio 2.6 / 1.13\n")
print("| dtype | shape | LibTorch 1.13 | LibTorch 2.6 | 2.6 / 1.13 |")
print("|---|---|---|---|---|")
for (dtype, shape), by in sorted(rates.items()):
    old, new = by.get("1.13", []), by.get("2.6", [])
    cell = lambda v: "%.0f [%s]" % (statistics.median(v), ", ".join("%.0f" % x for x in v)) if v else "-"
    ratio = "%.2f" % (statistics.median(new) / statistics.median(old)) if old and new else "-"
    print(f"| {dtype} | {shape} | {cell(old)} | {cell(new)} | {ratio} |")
PY
