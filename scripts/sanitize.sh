#!/usr/bin/env bash
# The torch-free service tests (batcher, request builders, reactors, the
# server over a fake engine, drain, TLS and API keys) built with AddressSanitizer and
# UndefinedBehaviorSanitizer, and run; any report fails. Called by
# scripts/test.sh; runs alone too (after scripts/install_deps.sh).
#
# ThreadSanitizer runs in its own build (scripts/tsan.sh), with an
# instrumented abseil.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${SANITIZE_BUILD_DIR:-build-asan}
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEBERTA_BUILD_BENCH=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target service_tests security_tests
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$BUILD_DIR/tests/service/service_tests" --gtest_brief=1
"$BUILD_DIR/tests/service/security_tests" --gtest_brief=1
echo "sanitize: service tests clean under ASan + UBSan"
