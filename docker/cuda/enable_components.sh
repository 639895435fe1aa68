#!/usr/bin/env bash
# Adds Debian's contrib and non-free components to the image's apt sources
# (deb822 debian.sources as in debian:trixie-slim, or a one-line
# sources.list as debootstrap writes): the CUDA LibTorch is in contrib, the
# CUDA libraries and toolkit in non-free.
set -euo pipefail
deb822=/etc/apt/sources.list.d/debian.sources
if [[ -f $deb822 ]]; then
  sed -i -E 's/^Components: main$/Components: main contrib non-free non-free-firmware/' "$deb822"
  grep -q '^Components: main contrib non-free' "$deb822"
else
  sed -i -E 's/^(deb .*) main$/\1 main contrib non-free non-free-firmware/' /etc/apt/sources.list
  grep -qE '^deb .* main contrib non-free' /etc/apt/sources.list
fi
