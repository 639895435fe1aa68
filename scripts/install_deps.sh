#!/usr/bin/env bash
# Installs the dependencies of deberta-serve from Debian 12 packages.
# Idempotent: packages already present are skipped.
#
#   scripts/install_deps.sh                 build + test tools (what scripts/test.sh needs)
#   scripts/install_deps.sh --build         toolchain and libraries only (image build stage)
#   scripts/install_deps.sh --runtime-only  shared libraries the server needs (image runtime stage)
#   scripts/install_deps.sh --cuda-build    Debian 13 (contrib, non-free): --build with the CUDA
#                                           LibTorch and the CUDA compiler (docker/Dockerfile.cuda)
#   scripts/install_deps.sh --cuda-runtime  Debian 13: the CUDA image's runtime libraries
set -euo pipefail

build_packages=(
  build-essential cmake ninja-build ccache lld pkg-config git
  libtorch-dev libopenblas0-openmp libdnnl-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev libgoogle-glog-dev
  libabsl-dev prometheus-cpp-dev libcpp-httplib-dev libssl-dev nlohmann-json3-dev libsentencepiece-dev libicu-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)
# What the integration tests drive: a real Prometheus and promtool, podman
# and debootstrap for the image test; clang and its libFuzzer runtime for
# the fuzzers; Chromium for the try-it page's browser test; Go with the
# protobuf and gRPC code generators for the Go client example; Debian's
# PyTorch for the eager PyTorch peer in the GPU check's CPU run. Node.js and
# npm (the Kubernetes schema check, the OpenAPI validator, the browser
# driver) come from Debian unless the machine already has them.
test_packages=(
  prometheus curl ca-certificates podman runc catatonit debootstrap fuse-overlayfs uidmap
  clang libclang-rt-14-dev python3-grpcio python3-protobuf chromium
  golang-go protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev golang-google-protobuf-dev
  golang-github-golang-protobuf-1-5-dev python3-torch
)
runtime_packages=(
  libtorch1.13 libopenblas0-openmp libgrpc++1.51 libprotobuf32 libabsl20220623
  libprometheus-cpp-core1.0 libcpp-httplib0.11 libssl3 libsentencepiece0 libicu72 ca-certificates
)

# The CUDA image, on Debian 13: Debian's CUDA LibTorch 2.6 in place of the
# CPU one (they conflict), and nvcc with a host compiler it accepts (g++-13),
# which LibTorch's CMake package needs to configure a CUDA build. Its
# libcuda1 and nvidia-cudnn dependencies are met as docker/Dockerfile.cuda
# explains. Runtime names are Debian 13's.
cuda_build_packages=("${build_packages[@]/libtorch-dev/libtorch-cuda-dev}" nvidia-cuda-toolkit-gcc)
cuda_runtime_packages=(
  libtorch-cuda-2.6 libopenblas0-openmp libgrpc++1.51t64 libprotobuf32t64 libabsl20240722
  libprometheus-cpp-core1.0 libcpp-httplib0.18 libssl3t64 libsentencepiece0 libicu76 libgoogle-glog0v6t64
  ca-certificates
)

case "${1:-}" in
  --runtime-only) packages=("${runtime_packages[@]}") ;;
  --build) packages=("${build_packages[@]}") ;;
  --cuda-build) packages=("${cuda_build_packages[@]}") ;;
  --cuda-runtime) packages=("${cuda_runtime_packages[@]}") ;;
  "") packages=("${build_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: $0 [--build|--runtime-only|--cuda-build|--cuda-runtime]" >&2; exit 2 ;;
esac

if [[ -z "${1:-}" ]] && ! command -v npm >/dev/null; then packages+=(nodejs npm); fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#packages[@]} packages present"
else
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "install_deps: installed ${missing[*]}"
fi

# The test tools from npm, pinned by their package-lock.json files.
if [[ -z "${1:-}" ]]; then
  cd "$(dirname "$0")/.."
  for tools in deploy/tools tests/web tests/compat; do
    if [[ ! -d $tools/node_modules ]]; then
      npm ci --prefix "$tools" --no-audit --no-fund --loglevel=error
      echo "install_deps: npm packages of $tools"
    fi
  done
fi
