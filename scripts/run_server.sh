#!/usr/bin/env bash
# Installs the dependencies, builds, and starts the server on the built-in
# demo model (the README's run command). Extra arguments go to the server.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh --build
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j "$(nproc)" --target deberta-server deberta-cli
exec "$BUILD_DIR/service/deberta-server" --model=demo --http_port=8080 "$@"
