#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each for FUZZ_SECONDS (default 30)
# from its seed corpus (fuzz/corpus/<target>, copied: the repository's
# corpus is not changed), as many at once as there are cores. A crash,
# leak or sanitizer report fails; the input that caused it is left in
# $BUILD_DIR/findings/ to become a test.
# Called by scripts/test.sh; runs alone too (after scripts/install_deps.sh).
#
#   scripts/fuzz.sh               build and run
#   scripts/fuzz.sh --build-only  only build (CI compiles while the image
#                                 package stages finish in the background)
#   scripts/fuzz.sh --run-only    only run what --build-only built
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-30}
STEP=${1:-all}
case $STEP in all|--build-only|--run-only) ;; *) echo "usage: $0 [--build-only|--run-only]" >&2; exit 2 ;; esac
targets=(safetensors_fuzzer config_fuzzer tokenizer_fuzzer request_fuzzer)
# -O1 -g1, as libFuzzer's documentation builds its targets and as
# scripts/sanitize.sh builds its tests.
if [[ $STEP != --run-only ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DDEBERTA_BUILD_TESTS=OFF -DDEBERTA_BUILD_BENCH=OFF -DDEBERTA_BUILD_FUZZERS=ON \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" >/dev/null
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${targets[@]}"
fi
if [[ $STEP == --build-only ]]; then exit 0; fi
mkdir -p "$BUILD_DIR/findings"

# fuzz_one TARGET: runs TARGET from a copy of its seed corpus; prints its
# stats, or its log's tail if it found something.
fuzz_one() {
  local target=$1 corpus="$BUILD_DIR/corpus/$1"
  rm -rf "$corpus" && mkdir -p "$corpus" && cp fuzz/corpus/"$target"/* "$corpus"/
  if ! "$BUILD_DIR/fuzz/$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$BUILD_DIR/findings/$target-" -print_final_stats=1 "$corpus" 2>"$BUILD_DIR/$target.log"; then
    tail -40 "$BUILD_DIR/$target.log"
    echo "fuzz: $target FAILED"
    return 1
  fi
  echo "fuzz: $target: $(grep -E "stat::number_of_executed_units|stat::new_units_added" "$BUILD_DIR/$target.log" | tr '\n' ' ')"
}

# A fuzzer is one thread and each runs for the same time: they run in
# rounds of as many as there are cores.
echo "fuzz: ${#targets[@]} targets, ${SECONDS_EACH}s each, $(nproc) at a time"
failed=0
for ((i = 0; i < ${#targets[@]}; i += $(nproc))); do
  pids=()
  for target in "${targets[@]:i:$(nproc)}"; do
    fuzz_one "$target" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
done
((failed == 0)) || { echo "fuzz: a target failed"; exit 1; }
echo "fuzz: ${#targets[@]} targets clean"
