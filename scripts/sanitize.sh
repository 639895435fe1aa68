#!/usr/bin/env bash
# The torch-free service tests (batcher, request builders, reactors, the
# server over a fake engine, drain, TLS and API keys) and the end-to-end
# tests (demo and golden models, the real deberta-server and deberta-cli as
# child processes, which are instrumented too) built with AddressSanitizer
# and UndefinedBehaviorSanitizer, and run; any report fails (a child's report
# fails it, so the test that started it fails). LibTorch and the other
# Debian libraries stay uninstrumented. Called by
# scripts/test.sh; runs alone too (after scripts/install_deps.sh).
#
#   scripts/sanitize.sh               build and run
#   scripts/sanitize.sh --build-only  only build (CI compiles while the image
#                                     package stages finish in the background)
#   scripts/sanitize.sh --run-only    only run what --build-only built
#
# ThreadSanitizer runs in its own build (scripts/tsan.sh), with an
# instrumented abseil.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${SANITIZE_BUILD_DIR:-build-asan}
STEP=${1:-all}
case $STEP in all|--build-only|--run-only) ;; *) echo "usage: $0 [--build-only|--run-only]" >&2; exit 2 ;; esac
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# -O1 -g1 (line tables, enough for reports' stack traces) halves the compile
# time of the LibTorch files against -O2 -g (measured: 35 s against 64 s for
# model/torch/encoder_layer.cc).
if [[ $STEP != --run-only ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DDEBERTA_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target service_tests security_tests e2e_tests
fi
if [[ $STEP == --build-only ]]; then exit 0; fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp
"$BUILD_DIR/tests/service/service_tests" --gtest_brief=1
"$BUILD_DIR/tests/service/security_tests" --gtest_brief=1
# Left out: the cases on SentencePiece tokenizers. Their plugin must be
# opened with RTLD_DEEPBIND (model/sentencepiece_model.h), which the
# sanitizer runtime refuses outright (google/sanitizers#611). (A model
# repository of GPT-2 models does run here: WebTest.AModelSelector...)
"$BUILD_DIR/tests/e2e/e2e_tests" --gtest_brief=1 \
  --gtest_filter='-Golden/TextServerTest.*/1:Golden/TextServerTest.*/2:ZeroShotTest.*:TaskGolden/TaskGoldenTest.*/tc_hf_spm:TaskGolden/TaskGoldenTest.*/long_tc_spm:TaskGolden/TaskGoldenTest.*/rerank_spm:TaskGolden/TaskGoldenTest.*/long_cls_spm:TaskCliTest.Rerank*:WebTest.RerankForm*:ModelRepositoryServerTest.*:ModelRepositoryCliTest.*'
echo "sanitize: service and e2e tests clean under ASan + UBSan"
