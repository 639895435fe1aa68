#!/usr/bin/env bash
# Builds the whole project against Debian 13's LibTorch 2.6 (CPU) and runs
# the model, service and e2e tests there (golden cases in fp32 and bf16, the
# bad-input table, the drain, the real binaries), in a trixie container:
# the same code must compile, warning-free (-Werror), against Debian 12's
# LibTorch 1.13 and Debian 13's 2.6. CI runs it after the image test.
#
# The trixie root comes from debootstrap (no registry here) and becomes the
# image docker/Dockerfile.trixie-build, which podman keeps under
# $IMAGE_TEST_ROOT (scripts/podman_env.sh). The source is mounted read-only;
# the build folder is $ROOT/libtorch2-build, its ccache outside the checkout
# ($DEBERTA_CCACHE_DIR, default /var/tmp/deberta-serve-ccache, like the
# host build's ~/.cache/ccache), so that a new clone rebuilds only what
# changed.
# Not run there: the browser and OpenAPI checks (WebTest) and the Go example,
# whose tools are not in the image; the deploy and integration labels, which
# do not depend on LibTorch.
#
#   scripts/libtorch2_test.sh          (as root; sudo otherwise)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $(id -u) -ne 0 ]]; then exec sudo -E "$0" "$@"; fi

BASE_IMAGE=localhost/debian:trixie-minbase
IMAGE=localhost/deberta-serve:trixie-build
source scripts/podman_env.sh
debian_base_image trixie "$BASE_IMAGE"

started=$SECONDS
echo "libtorch2_test: building $IMAGE"
podman build --network host --pull=never --build-arg BASE_IMAGE="$BASE_IMAGE" \
  -f docker/Dockerfile.trixie-build -t "$IMAGE" . >"$ROOT/trixie-image.log" 2>&1 ||
  { tail -40 "$ROOT/trixie-image.log"; exit 1; }
echo "libtorch2_test: image ready in $((SECONDS - started)) s"

BUILD=$ROOT/libtorch2-build
CCACHE=${DEBERTA_CCACHE_DIR:-/var/tmp/deberta-serve-ccache}/libtorch2
mkdir -p "$BUILD" "$CCACHE"
started=$SECONDS
podman run --rm --network host -v "$PWD:/src:ro" -v "$BUILD:/build" -v "$CCACHE:/ccache" \
  -e CCACHE_DIR=/ccache -e GTEST_FILTER='-WebTest.*' "$IMAGE" bash -c '
  set -euo pipefail
  for p in libtorch-dev libgrpc++-dev libabsl-dev libprotobuf-dev g++; do
    echo "libtorch2_test: $p $(dpkg-query -W -f="\${Version}" "$p")"
  done
  cmake -S /src -B /build/out -G Ninja -DCMAKE_BUILD_TYPE=Release -DDEBERTA_WERROR=ON >/build/configure.log
  cmake --build /build/out -j "$(nproc)" >/build/build.log 2>&1 || { grep -B2 -A20 -m3 "error" /build/build.log; exit 1; }
  echo "libtorch2_test: built"
  ctest --test-dir /build/out --output-on-failure -j "$(nproc)" -L "model|service|e2e" -E "go_client"
'
echo "libtorch2_test: build and tests in $((SECONDS - started)) s"
echo "libtorch2_test: passed"
