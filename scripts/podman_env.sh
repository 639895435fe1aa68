# Sourced by the scripts that build and run images with podman
# (image_test.sh, bench/libtorch_versions.sh): the podman settings from
# docker/podman/ (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF, images under
# $ROOT = $IMAGE_TEST_ROOT, by default build/podman), the Debian mirror
# this machine's apt uses, and base images made with debootstrap (no
# registry is reachable here). Run from the repository root, as root.

ROOT=${IMAGE_TEST_ROOT:-$PWD/build/podman}
mkdir -p "$ROOT"
sed "s|@ROOT@|$ROOT|g" docker/podman/storage.conf.in >"$ROOT/storage.conf"
export CONTAINERS_CONF=$PWD/docker/podman/containers.conf
export CONTAINERS_STORAGE_CONF=$ROOT/storage.conf

source scripts/debian_mirror.sh

# debian_base_image SUITE IMAGE [COMPONENTS]: imports a minimal Debian SUITE
# root made with debootstrap as IMAGE, unless podman already has it. Its
# apt sources name COMPONENTS (default main) of SUITE, SUITE-updates and
# SUITE-security, as Debian's own images do: the images get the security
# fixes, and the CPU image's build stage the header versions of a host
# that has them (so that it can hit the host's ccache).
debian_base_image() {
  local suite=$1 image=$2 components=${3:-main}
  podman image exists "$image" && return 0
  local rootfs=$ROOT/rootfs-$suite
  rm -rf "$rootfs"
  echo "$(basename "$0"): debootstrap $suite ($components) from $(mirror)"
  debootstrap --variant=minbase --components="$components" "$suite" "$rootfs" "$(mirror)" \
    >"$ROOT/debootstrap-$suite.log" 2>&1 || { tail -20 "$ROOT/debootstrap-$suite.log"; return 1; }
  local listed=${components//,/ }
  printf 'deb %s %s %s\ndeb %s %s-updates %s\ndeb %s %s-security %s\n' \
    "$(mirror)" "$suite" "$listed" "$(mirror)" "$suite" "$listed" \
    "$(security_mirror)" "$suite" "$listed" >"$rootfs/etc/apt/sources.list"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import - "$image" >/dev/null
  rm -rf "$rootfs"
}
