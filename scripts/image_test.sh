#!/usr/bin/env bash
# Builds the CPU image with podman and tests it for real: starts it on the
# demo model, checks health SERVING, one classify and one fill-mask request
# (with the image's own deberta-cli), that it runs as non-root, then stops it
# with SIGTERM and checks that the server drained and exited 0. CI runs it.
#
# No registry is reachable, so the Debian 12 base image is made here with
# `debootstrap --variant=minbase bookworm` from the mirror in this machine's
# apt sources and imported under the name docker/Dockerfile uses. Every
# podman setting comes from docker/podman/ (CONTAINERS_CONF,
# CONTAINERS_STORAGE_CONF); images live under $IMAGE_TEST_ROOT
# (scripts/podman_env.sh).
#
#   scripts/image_test.sh          (debootstrap and podman run as root; sudo otherwise)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $(id -u) -ne 0 ]]; then exec sudo -E "$0" "$@"; fi

BASE_IMAGE=docker.io/library/debian:bookworm-slim
IMAGE=localhost/deberta-serve:cpu
NAME=deberta-image-test-$$
source scripts/podman_env.sh
debian_base_image bookworm "$BASE_IMAGE"

echo "image_test: building $IMAGE"
podman build --network host --pull=never -f docker/Dockerfile -t "$IMAGE" . >"$ROOT/build.log" 2>&1 ||
  { tail -40 "$ROOT/build.log"; exit 1; }
podman image inspect "$IMAGE" --format 'image_test: {{.Id}} {{.Size}} bytes, user {{.Config.User}}'

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
METRICS_PORT=$(free_port)
cleanup() { podman rm -f "$NAME" >/dev/null 2>&1 || true; }
trap cleanup EXIT
podman run -d --init --network host --name "$NAME" "$IMAGE" \
  --port="$PORT" --metrics_port="$METRICS_PORT" --threads=1 >/dev/null

cli() { podman exec "$NAME" deberta-cli "$@" --server="127.0.0.1:$PORT"; }
for _ in $(seq 120); do
  if cli health 2>/dev/null | grep -x SERVING >/dev/null; then break; fi
  if [ "$(podman inspect -f '{{.State.Running}}' "$NAME")" != true ]; then podman logs "$NAME"; exit 1; fi
  sleep 0.5
done
cli health | grep -x "SERVING" >/dev/null || { echo "FAIL: not SERVING"; podman logs "$NAME"; exit 1; }
echo "ok   health SERVING"
cli health --health_service=deberta.serving.v1.InferenceService | grep -x "SERVING" >/dev/null
echo "ok   inference service SERVING"
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

podman stop --time 30 "$NAME" >/dev/null   # SIGTERM, through --init to the server.
EXIT_CODE=$(podman inspect -f '{{.State.ExitCode}}' "$NAME")
podman logs "$NAME" >"$ROOT/server.log" 2>&1
[ "$EXIT_CODE" = 0 ] || { echo "FAIL: exit code $EXIT_CODE"; cat "$ROOT/server.log"; exit 1; }
grep -q "signal 15, draining" "$ROOT/server.log" && grep -q "stopped" "$ROOT/server.log" ||
  { echo "FAIL: no drain in the log"; cat "$ROOT/server.log"; exit 1; }
echo "ok   SIGTERM: drained, exit code 0"
podman image prune -f >/dev/null 2>&1 || true  # Layers of earlier builds.
echo "image_test: passed"
