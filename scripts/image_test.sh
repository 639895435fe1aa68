#!/usr/bin/env bash
# Builds an image with podman and tests it for real: starts it on the demo
# model, checks health SERVING, one classify and one fill-mask request
# (with the image's own deberta-cli), that it runs as non-root, /metrics,
# then stops it with SIGTERM and checks that the server drained and exited
# 0. CI runs both modes.
#
#   scripts/image_test.sh          the CPU image (docker/Dockerfile, Debian 12)
#   scripts/image_test.sh --cuda   the CUDA image (docker/Dockerfile.cuda, Debian 13, Debian's
#                                  CUDA LibTorch), built with CUDNN=none and run without a GPU:
#                                  --device=cpu on the demo model and on a golden model (answers
#                                  checked against the golden logits), and --device=cuda:0 must
#                                  exit non-zero at once saying no CUDA device is visible; then
#                                  its test stage (the image's build tree plus the tests, run on
#                                  Debian 13's LibTorch 2.6: the model, service and e2e labels),
#                                  kept as the image localhost/deberta-serve:cuda-test
#   scripts/image_test.sh --prepare  only the two images' package stages (the debootstrapped
#                                  bases and apt), so that the builds above find them cached:
#                                  CI runs it in the background while it compiles the project
#
# Both build with -DDEBERTA_WERROR=ON, as CI's own build. The CPU image's
# build stage reads the host's ccache ($CCACHE_DIR, which scripts/test.sh
# sets; mounted read-only): the host build has just compiled the same files
# with the same compiler and flags, so its objects can be cache hits. The
# sources sit at this checkout's path in the build stage (SRC_DIR), as the
# unity files name them by absolute path.
#
# No registry is reachable, so the Debian base image is made here with
# `debootstrap --variant=minbase` from the mirror in this machine's apt
# sources. Every podman setting comes from docker/podman/ (CONTAINERS_CONF,
# CONTAINERS_STORAGE_CONF); images live under $IMAGE_TEST_ROOT
# (scripts/podman_env.sh).
#
# The CUDA image cannot hold cuDNN here (Debian's nvidia-cudnn downloads it
# from NVIDIA), and Debian's CUDA LibTorch does not load without a
# libcudnn.so.9; the test mounts a stand-in it generates, on this machine,
# from the symbols the image's libtorch_cuda.so imports
# (docker/cuda/make_cudnn_standin.sh), which is never part of an image.
#
#   (debootstrap and podman run as root; sudo otherwise)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $(id -u) -ne 0 ]]; then exec sudo -E "$0" "$@"; fi

MODE=cpu
case "${1:-}" in
  "") ;;
  --cuda) MODE=cuda ;;
  --prepare) MODE=prepare ;;
  *) echo "usage: $0 [--cuda|--prepare]" >&2; exit 2 ;;
esac
NAME=deberta-image-test-$$
source scripts/podman_env.sh
RUN_FLAGS=()  # Extra `podman run` flags of every container of the image.

# image_settings cpu|cuda: the base image (made with debootstrap if
# missing), IMAGE and the build flags of that image; --prepare and the
# image's own build use the same flags, so that the package stages the
# first builds are the second's cache hits.
image_settings() {
  if [[ $1 == cpu ]]; then
    BASE_IMAGE=docker.io/library/debian:bookworm-slim
    IMAGE=localhost/deberta-serve:cpu
    debian_base_image bookworm "$BASE_IMAGE"
    BUILD_FLAGS=(-f docker/Dockerfile --build-arg CMAKE_ARGS=-DDEBERTA_WERROR=ON)
    if [[ -n ${CCACHE_DIR:-} && -d $CCACHE_DIR ]]; then
      BUILD_FLAGS+=(-v "$CCACHE_DIR:/host-ccache:ro" --build-arg HOST_CCACHE=/host-ccache
                    --build-arg SRC_DIR="$PWD")
    fi
  else
    BASE_IMAGE=localhost/debian:trixie-minbase
    IMAGE=localhost/deberta-serve:cuda
    debian_base_image trixie "$BASE_IMAGE"
    BUILD_FLAGS=(-f docker/Dockerfile.cuda --build-arg BASE_IMAGE="$BASE_IMAGE" --build-arg CUDNN=none
                 --build-arg CMAKE_ARGS=-DDEBERTA_WERROR=ON)
  fi
}

if [[ $MODE == prepare ]]; then
  # Only the package stages of both images: the debootstraps and apt's
  # downloads and unpacking (network, disk, and unpacking's CPU). CI runs
  # this in the background, niced, while it compiles.
  for image in cpu cuda; do
    image_settings "$image"
    for target in build-packages runtime-packages; do
      started=$SECONDS
      podman build --network host --pull=never "${BUILD_FLAGS[@]}" --target "$target" . \
        >"$ROOT/prepare-$image-$target.log" 2>&1 || { tail -40 "$ROOT/prepare-$image-$target.log"; exit 1; }
      echo "image_test: $image $target ready in $((SECONDS - started)) s"
    done
  done
  exit 0
fi
image_settings "$MODE"

echo "image_test: building $IMAGE"
started=$SECONDS
podman build --network host --pull=never "${BUILD_FLAGS[@]}" -t "$IMAGE" . >"$ROOT/build-$MODE.log" 2>&1 ||
  { tail -40 "$ROOT/build-$MODE.log"; exit 1; }
echo "image_test: built in $((SECONDS - started)) s"
grep -h '^host ccache hits:' "$ROOT/build-$MODE.log" | sed 's/^/image_test: /' || true
podman image inspect "$IMAGE" --format 'image_test: {{.Id}} {{.Size}} bytes, user {{.Config.User}}'

cleanup() { podman rm -f "$NAME" "$NAME-golden" >/dev/null 2>&1 || true; }
trap cleanup EXIT

if [[ $MODE == cuda ]]; then
  STANDIN=$ROOT/ci-only-cudnn-standin
  rm -rf "$STANDIN"
  rootfs=$(podman image mount "$IMAGE")
  bash docker/cuda/make_cudnn_standin.sh "$(find "$rootfs/usr/lib/x86_64-linux-gnu" -name 'libtorch_cuda.so.*.*' | head -1)" \
    "$STANDIN" | sed 's/^/image_test: /'
  podman image unmount "$IMAGE" >/dev/null

  # The image holds LibTorch's CUDA library but no cuDNN, so it cannot start alone.
  if podman run --rm --entrypoint /bin/sh "$IMAGE" -c 'ls /usr/lib/x86_64-linux-gnu/libcudnn*' 2>/dev/null; then
    echo "FAIL: the CUDNN=none image holds a libcudnn"; exit 1
  fi
  podman run --rm --entrypoint /bin/sh "$IMAGE" -c 'ls /usr/lib/x86_64-linux-gnu/libtorch_cuda.so.*' >/dev/null
  if podman run --rm "$IMAGE" --help >"$ROOT/no-cudnn.out" 2>&1 ||
     ! grep -q "libcudnn.so.9" "$ROOT/no-cudnn.out"; then
    echo "FAIL: expected the image to need libcudnn.so.9:"; cat "$ROOT/no-cudnn.out"; exit 1
  fi
  echo "ok   holds libtorch_cuda.so and no cuDNN; without one it does not start ($(head -1 "$ROOT/no-cudnn.out" | cut -c1-100))"
  RUN_FLAGS=(-v "$STANDIN:/opt/ci-only-cudnn-standin:ro" -e LD_LIBRARY_PATH=/opt/ci-only-cudnn-standin)

  # --device=cuda:0 without a GPU: a clear refusal at start-up, not a hang.
  started=$SECONDS
  if timeout 120 podman run --rm "${RUN_FLAGS[@]}" "$IMAGE" --device=cuda:0 >"$ROOT/cuda0.out" 2>&1; then
    echo "FAIL: --device=cuda:0 started without a GPU"; cat "$ROOT/cuda0.out"; exit 1
  fi
  grep -q "no CUDA device is visible" "$ROOT/cuda0.out" ||
    { echo "FAIL: --device=cuda:0 did not say why:"; cat "$ROOT/cuda0.out"; exit 1; }
  echo "ok   --device=cuda:0 exits non-zero in $((SECONDS - started)) s: $(grep -o 'device cuda:0 requested.*visible' "$ROOT/cuda0.out" | head -1)"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start NAME [podman run flags] -- [server flags]: runs the image on free
# ports (PORT, METRICS_PORT) and waits until it is SERVING.
start() {
  local name=$1
  shift
  local run=() server=()
  while (($#)) && [[ $1 != -- ]]; do run+=("$1"); shift; done
  (($#)) && shift
  server=("$@")
  PORT=$(free_port)
  METRICS_PORT=$(free_port)
  podman run -d --init --network host --name "$name" "${RUN_FLAGS[@]}" "${run[@]}" "$IMAGE" \
    --port="$PORT" --metrics_port="$METRICS_PORT" --threads=1 "${server[@]}" >/dev/null
  for _ in $(seq 240); do
    if podman exec "$name" deberta-cli health --server="127.0.0.1:$PORT" 2>/dev/null | grep -x SERVING >/dev/null; then
      return 0
    fi
    if [ "$(podman inspect -f '{{.State.Running}}' "$name")" != true ]; then podman logs "$name"; exit 1; fi
    sleep 0.5
  done
  echo "FAIL: $name not SERVING"; podman logs "$name"; exit 1
}

start "$NAME" -- --device=cpu
cli() { podman exec "$NAME" deberta-cli "$@" --server="127.0.0.1:$PORT"; }
echo "ok   health SERVING"
cli health --health_service=deberta.serving.v1.InferenceService | grep -x "SERVING" >/dev/null
echo "ok   inference service SERVING"
cli info | grep -E '^device: "?cpu"?$' >/dev/null || { echo "FAIL: not on the CPU"; cli info; exit 1; }
cli classify --sequences="1 17 42 99 2" --top_k=1 | tee "$ROOT/classify.out" | grep "sequence 0:  " >/dev/null
echo "ok   classify: $(tr '\n' ' ' <"$ROOT/classify.out" | cut -c1-120)"
cli fill-mask --sequences="1 17 4 99 2" --top_k=3 | tee "$ROOT/fill.out" | grep "position 2" >/dev/null
echo "ok   fill-mask: $(tr '\n' ' ' <"$ROOT/fill.out" | cut -c1-120)"
[ "$(podman exec "$NAME" id -u)" = 10001 ] || { echo "FAIL: runs as root"; exit 1; }
echo "ok   runs as uid 10001"
# Fetched whole before grep: `curl | grep -q` fails under pipefail when grep
# quits at the match while curl is still writing the page (curl exits 23).
metrics=$(curl -fs "http://127.0.0.1:$METRICS_PORT/metrics")
grep -q '^deberta_model_ready 1' <<<"$metrics" || { echo "FAIL: deberta_model_ready is not 1"; exit 1; }
echo "ok   /metrics served"

if [[ $MODE == cuda ]]; then
  # A golden model mounted at /models, as users mount theirs: the CUDA
  # LibTorch on the CPU must give the reference's answers.
  golden=tests/golden/b_v3_base_like
  start "$NAME-golden" -v "$PWD/$golden:/models:ro" -- --device=cpu
  podman exec "$NAME-golden" deberta-cli classify --server="127.0.0.1:$PORT" --json \
    --sequences="$(python3 tests/image/golden_answers.py sequences "$golden")" >"$ROOT/golden.json"
  echo "ok   golden $(basename "$golden"): $(python3 tests/image/golden_answers.py check "$golden" "$ROOT/golden.json")"
  podman rm -f "$NAME-golden" >/dev/null
fi

podman stop --time 30 "$NAME" >/dev/null   # SIGTERM, through --init to the server.
EXIT_CODE=$(podman inspect -f '{{.State.ExitCode}}' "$NAME")
podman logs "$NAME" >"$ROOT/server.log" 2>&1
[ "$EXIT_CODE" = 0 ] || { echo "FAIL: exit code $EXIT_CODE"; cat "$ROOT/server.log"; exit 1; }
grep -q "signal 15, draining" "$ROOT/server.log" && grep -q "stopped" "$ROOT/server.log" ||
  { echo "FAIL: no drain in the log"; cat "$ROOT/server.log"; exit 1; }
echo "ok   SIGTERM: drained, exit code 0"

if [[ $MODE == cuda ]]; then
  # The build stage is cached from the image just built: only the tests compile.
  echo "image_test: test stage (Debian 13, LibTorch 2.6)"
  started=$SECONDS
  podman build --network host --pull=never "${BUILD_FLAGS[@]}" --target test \
    -t localhost/deberta-serve:cuda-test . >"$ROOT/test-$MODE.log" 2>&1 ||
    { grep -E -A3 "test stage: |tests? failed|Failed|\*\*\*|error:|CMake Error" "$ROOT/test-$MODE.log" | tail -60; exit 1; }
  grep -E "^test stage: |tests passed|Total Test time" "$ROOT/test-$MODE.log"
  echo "ok   Debian 13 tests passed in $((SECONDS - started)) s"
fi
podman image prune -f >/dev/null 2>&1 || true  # Layers of earlier builds.
echo "image_test: $MODE passed"
