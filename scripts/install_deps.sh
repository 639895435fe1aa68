#!/usr/bin/env bash
# Installs every build, test and runtime dependency of deberta-serve from
# Debian 12 packages. Idempotent: packages already present are skipped by apt.
# Usage: scripts/install_deps.sh [--runtime-only]
set -euo pipefail

build_packages=(
  build-essential cmake ninja-build ccache lld pkg-config git
  libtorch-dev libopenblas0-openmp
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev grpc-proto
  libabsl-dev prometheus-cpp-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)
runtime_packages=(libtorch1.13 libopenblas0-openmp)

if [[ "${1:-}" == "--runtime-only" ]]; then
  packages=("${runtime_packages[@]}")
else
  packages=("${build_packages[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install_deps: installed ${missing[*]}"
