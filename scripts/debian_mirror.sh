# Sourced by the scripts that fetch from Debian (podman_env.sh for
# debootstrap, tsan.sh for abseil's source package): `mirror` prints the
# Debian mirror this machine's apt uses (deb822 or one-line sources).
mirror() {
  local uri
  uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -1)
  [ -z "$uri" ] && uri=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
                         awk '{print $2}' | grep -v security | head -1)
  echo "${uri:-http://deb.debian.org/debian}"
}
