#!/usr/bin/env bash
# Installs the dependencies, builds everything and runs every test: the
# CTest suites (model, service, e2e, deploy, integration), the model and
# golden-server tests again as on an AVX2-only CPU (scripts/avx2_check.sh),
# the GPU machine's
# one-call check run on the CPU (scripts/gpu_check.sh), the service tests
# again under ASan + UBSan (scripts/sanitize.sh) and under ThreadSanitizer
# (scripts/tsan.sh), the libFuzzer targets for a bounded time each
# (scripts/fuzz.sh), the CPU container image built with podman and run
# (scripts/image_test.sh), and the CUDA image (Debian 13, Debian's CUDA
# LibTorch 2.6) built and run without a GPU, whose build tree then builds
# and runs the model, service and e2e tests on Debian 13 (scripts/image_test.sh
# --cuda): one Debian 13 build for both.
# The images' package stages are built in the background from the start
# (scripts/image_test.sh --prepare). Each stage's time is printed at its end.
# This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# One ccache for every build of this run, paths hashed relative to the
# checkout, so that the CPU image's build (same compiler, packages and flags)
# reuses the host build's objects (scripts/image_test.sh).
export CCACHE_DIR=${CCACHE_DIR:-$(ccache -k cache_dir 2>/dev/null || echo "$HOME/.cache/ccache")}
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK="%compiler% -v"

stage() {
  local name=$1 started=$SECONDS
  shift
  "$@"
  echo "test.sh: stage $name took $((SECONDS - started)) s; $(df -h --output=avail . | tail -1 | tr -d ' ') free on disk"
}
# With DEBERTA_CI_FREE_DISK=1 (.ci/run), each extra build tree is removed once its
# stage passed, before the image stages, which need the most disk (the CUDA
# package layers hold several GB, and committing one takes about four times its size).
free_disk() {
  if [[ ${DEBERTA_CI_FREE_DISK:-0} == 1 ]]; then rm -rf "$@"; fi
}

stage install bash scripts/install_deps.sh
# The two images' package stages (debootstrap, apt: the network and the disk
# more than the CPU) build in the background, niced, while the project
# compiles; the tests wait for them (image_prepare), and the image stages
# below find them cached.
mkdir -p "$BUILD_DIR" "$CCACHE_DIR"
IMAGE_TEST_ROOT="$PWD/$BUILD_DIR/podman" nice -n 10 bash scripts/image_test.sh --prepare \
  >"$BUILD_DIR/image-prepare.log" 2>&1 &
prepare_pid=$!
trap 'kill "$prepare_pid" 2>/dev/null || true' EXIT
prepared() {
  wait "$prepare_pid" || { cat "$BUILD_DIR/image-prepare.log"; return 1; }
  cat "$BUILD_DIR/image-prepare.log"
}
stage configure cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDEBERTA_WERROR=ON
stage build cmake --build "$BUILD_DIR" -j "$(nproc)"
# The ASan, TSan and fuzzer builds compile while the package stages finish
# (niced, they get little CPU beside two compile jobs: on a cold 2-core AVX2
# EPYC the CUDA build packages took 1231 s there, 242-332 s alone); their
# runs come below. With only the host and ASan builds before the wait, the
# package stages had needed 649 s more (bench/results/ci-cold-run-epyc has
# the run with all four: 305 s).
stage sanitize_build env SANITIZE_BUILD_DIR="$BUILD_DIR-asan" bash scripts/sanitize.sh --build-only
stage tsan_build env TSAN_BUILD_DIR="$BUILD_DIR-tsan" bash scripts/tsan.sh --build-only
stage fuzz_build env FUZZ_BUILD_DIR="$BUILD_DIR-fuzz" bash scripts/fuzz.sh --build-only
# The tests run on a quiet machine: some answer within deadlines.
stage image_prepare prepared
stage ctest ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
stage avx2_check bash scripts/avx2_check.sh "$BUILD_DIR"
stage gpu_check env GPU_CHECK_BUILD_DIR="$BUILD_DIR-gpu-check" bash scripts/gpu_check.sh "$BUILD_DIR/gpu-check"
free_disk "$BUILD_DIR-gpu-check"

stage sanitize env SANITIZE_BUILD_DIR="$BUILD_DIR-asan" bash scripts/sanitize.sh --run-only
free_disk "$BUILD_DIR-asan"
stage tsan env TSAN_BUILD_DIR="$BUILD_DIR-tsan" bash scripts/tsan.sh --run-only
free_disk "$BUILD_DIR-tsan"
stage fuzz env FUZZ_BUILD_DIR="$BUILD_DIR-fuzz" bash scripts/fuzz.sh --run-only
free_disk "$BUILD_DIR-fuzz"
stage image_test env IMAGE_TEST_ROOT="$PWD/$BUILD_DIR/podman" bash scripts/image_test.sh
stage image_test_cuda env IMAGE_TEST_ROOT="$PWD/$BUILD_DIR/podman" bash scripts/image_test.sh --cuda
echo "test.sh: every stage passed in $SECONDS s"
