#!/usr/bin/env bash
# The torch-free service tests (batcher, reactors, drain, the server's
# lifecycle over a fake engine, the JSON API) built with ThreadSanitizer and
# run; any report fails. Called by scripts/test.sh; runs alone too (after
# scripts/install_deps.sh).
#
# ThreadSanitizer sees a lock only if the lock's code is instrumented, and
# Debian's abseil is not: absl::Mutex (which gRPC's own locks use too)
# would be invisible and every access it guards reported. So this script
# builds Debian's own abseil source package, the exact version and patches
# of the installed libabsl-dev (options.h checked identical), with
# -fsanitize=thread, and runs the tests with those libraries first on the
# library path. Only the test run uses them; nothing is installed.
# gRPC itself stays uninstrumented: its lock-free internals are invisible,
# so reports whose every frame is inside gRPC are suppressed
# (scripts/tsan.supp); any report that touches our code fails the run.
#
#   scripts/tsan.sh               build and run
#   scripts/tsan.sh --build-only  only build (CI compiles while the image
#                                 package stages finish in the background)
#   scripts/tsan.sh --run-only    only run what --build-only built
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${TSAN_BUILD_DIR:-build-tsan}
STEP=${1:-all}
case $STEP in all|--build-only|--run-only) ;; *) echo "usage: $0 [--build-only|--run-only]" >&2; exit 2 ;; esac
source_version=$(dpkg-query -W -f='${source:Version}' libabsl-dev)   # e.g. 20220623.1-1+deb12u2
abseil=$PWD/$BUILD_DIR/abseil
mkdir -p "$abseil"

source scripts/debian_mirror.sh

if [[ $STEP != --run-only && ! -f $abseil/lib/.built-$source_version ]]; then
  echo "tsan: abseil $source_version from Debian's source package, built with -fsanitize=thread"
  rm -rf "$abseil/src" "$abseil/build" "$abseil/lib"
  debian_source abseil "$source_version" "$abseil/src"
  cmp -s "$abseil/src/absl/base/options.h" /usr/include/absl/base/options.h ||
    { echo "tsan: abseil's options.h differs from the installed one" >&2; exit 1; }
  # As debian/rules configures it (C++17, shared), plus the sanitizer.
  cmake -S "$abseil/src" -B "$abseil/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_STANDARD=17 \
    -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF -DCMAKE_CXX_FLAGS=-fsanitize=thread \
    -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >"$abseil/configure.log"
  # absl::Mutex and CondVar, and the libraries they need.
  cmake --build "$abseil/build" -j "$(nproc)" --target synchronization >"$abseil/build.log"
  mkdir -p "$abseil/lib"
  find "$abseil/build" -name 'libabsl_*.so.*' -exec cp -P {} "$abseil/lib/" \;
  touch "$abseil/lib/.built-$source_version"
fi

flags="-fsanitize=thread -fno-omit-frame-pointer"
# -O1 -g1 (line tables for the reports' stacks), as scripts/sanitize.sh.
if [[ $STEP != --run-only ]]; then
  cmake -S . -B "$BUILD_DIR/project" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DDEBERTA_BUILD_BENCH=OFF \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >/dev/null
  cmake --build "$BUILD_DIR/project" -j "$(nproc)" --target service_tests
fi
if [[ $STEP == --build-only ]]; then exit 0; fi
export LD_LIBRARY_PATH=$abseil/lib
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp"
# The instrumented abseil must be the one loaded, or the run proves nothing.
ldd "$BUILD_DIR/project/tests/service/service_tests" | grep "libabsl_synchronization.so.* => $abseil/lib/" >/dev/null ||
  { echo "tsan: the instrumented abseil is not the one loaded" >&2; exit 1; }
# The set-up itself: a race under an absl::Mutex is no race, one without is
# reported (tests/tsan/mutex_visibility.cc). Both runs take the same
# suppressions as the tests: without them the locked run fails now and then
# on abseil's own thread-identity hand-off (see scripts/tsan.supp), a report
# inside abseil, not on the counter; the counter's frames match none.
g++ -std=c++17 -O1 -g $flags tests/tsan/mutex_visibility.cc -o "$BUILD_DIR/mutex_visibility" \
  -labsl_synchronization
check_options="$TSAN_OPTIONS exitcode=66"
TSAN_OPTIONS=$check_options "$BUILD_DIR/mutex_visibility" locked ||
  { echo "tsan: a race under absl::Mutex was reported: the mutex is not visible" >&2; exit 1; }
if TSAN_OPTIONS=$check_options "$BUILD_DIR/mutex_visibility" 2>/dev/null; then
  echo "tsan: an unlocked race was not reported" >&2
  exit 1
fi
echo "tsan: absl::Mutex visible to the sanitizer, and an unlocked race reported"
"$BUILD_DIR/project/tests/service/service_tests" --gtest_brief=1
echo "tsan: service tests clean under ThreadSanitizer"
