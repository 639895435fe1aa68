#!/usr/bin/env bash
# Builds ahead what the image stages of CI spend most of their time
# downloading and unpacking: the Debian roots (debootstrap bookworm and
# trixie) and the package-only stages of docker/Dockerfile and
# docker/Dockerfile.cuda (build-deps, runtime-deps, with the build flags
# scripts/image_test.sh uses) and the image of docker/Dockerfile.trixie-build
# (scripts/libtorch2_test.sh), into the same podman storage. Those scripts
# then find the roots present and the layers cached, and build only what
# depends on the sources. scripts/test.sh runs this in the background while
# the sanitizer and fuzzing stages compute; it tests nothing itself, and a
# failure here only means the image stages do the same work themselves.
#
#   scripts/image_prefetch.sh          (as root; sudo otherwise)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $(id -u) -ne 0 ]]; then exec sudo -E "$0" "$@"; fi
source scripts/podman_env.sh

started=$SECONDS
for mode in cpu cuda; do
  image_settings "$mode"
  debian_base_image "$BASE_SUITE" "$BASE_IMAGE"
  for target in build-deps runtime-deps; do
    echo "image_prefetch: $mode $target"
    podman build --network host --pull=never "${BUILD_FLAGS[@]}" --target "$target" \
      -t "localhost/deberta-serve-prefetch:$mode-$target" . >"$ROOT/prefetch-$mode-$target.log" 2>&1 ||
      { tail -20 "$ROOT/prefetch-$mode-$target.log"; exit 1; }
  done
done
echo "image_prefetch: trixie-build"
podman build --network host --pull=never --build-arg BASE_IMAGE="$TRIXIE_BASE_IMAGE" \
  -f docker/Dockerfile.trixie-build -t "$TRIXIE_BUILD_IMAGE" . >"$ROOT/prefetch-trixie-build.log" 2>&1 ||
  { tail -20 "$ROOT/prefetch-trixie-build.log"; exit 1; }
echo "image_prefetch: done in $((SECONDS - started)) s"
