#!/usr/bin/env bash
# Installs the dependencies, builds everything and runs every test: the
# CTest suites (model, service, e2e, deploy, integration), the service tests
# again under ASan + UBSan (scripts/sanitize.sh), the libFuzzer targets for
# a bounded time each (scripts/fuzz.sh), then the CPU container
# image built with podman and run (scripts/image_test.sh).
# This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDEBERTA_WERROR=ON
cmake --build "$BUILD_DIR" -j "$(nproc)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
SANITIZE_BUILD_DIR="$BUILD_DIR-asan" bash scripts/sanitize.sh
FUZZ_BUILD_DIR="$BUILD_DIR-fuzz" bash scripts/fuzz.sh
IMAGE_TEST_ROOT="$PWD/$BUILD_DIR/podman" bash scripts/image_test.sh
