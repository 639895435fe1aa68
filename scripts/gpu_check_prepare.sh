#!/usr/bin/env bash
# Fills .gpu-check/ (ignored by git) with what scripts/gpu_check.sh needs on
# a machine that has PyTorch, a compiler, CMake and ninja but no packages
# and no network (the lent GPU machine): run it here, then carry the folder.
#
#   .gpu-check/third_party/abseil-cpp  Debian's abseil source package, patched
#   .gpu-check/third_party/benchmark   Debian's Google Benchmark source, patched
#   .gpu-check/third_party/nlohmann    the installed nlohmann-json headers
#   .gpu-check/peers                   the eager PyTorch peer (../shared/peers)
#
# The versions are those of the installed -dev packages, so the GPU build
# compiles the sources the Debian build links (abseil's options.h checked
# identical: absl::string_view stays its own type). About 20 MB.
#
#   scripts/gpu_check_prepare.sh [PEERS_DIR]     (default ../shared/peers)
# then, with the device tool: carry [".gpu-check"], run scripts/gpu_check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
peers=${1:-../shared/peers}
dest=$PWD/.gpu-check
source scripts/debian_mirror.sh

rm -rf "$dest"
mkdir -p "$dest/third_party"
debian_source abseil "$(dpkg-query -W -f='${source:Version}' libabsl-dev)" "$dest/third_party/abseil-cpp"
cmp -s "$dest/third_party/abseil-cpp/absl/base/options.h" /usr/include/absl/base/options.h ||
  { echo "gpu_check_prepare: abseil's options.h differs from the installed one" >&2; exit 1; }
debian_source benchmark "$(dpkg-query -W -f='${source:Version}' libbenchmark-dev)" "$dest/third_party/benchmark"
cp -r /usr/include/nlohmann "$dest/third_party/nlohmann"
# Their own tests and documentation are not built: leave them behind.
rm -rf "$dest"/third_party/{abseil-cpp,benchmark}/{debian,docs,.git*}
mkdir -p "$dest/peers"
cp "$peers"/*.py "$dest/peers/"
du -sh "$dest"
