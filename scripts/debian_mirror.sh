# Sourced by the scripts that fetch from Debian (podman_env.sh for
# debootstrap; tsan.sh and gpu_check_prepare.sh for source packages):
# `mirror` prints the Debian mirror this machine's apt uses (deb822 or
# one-line sources).
mirror() {
  local uri
  uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -1)
  [ -z "$uri" ] && uri=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
                         awk '{print $2}' | grep -v security | head -1)
  echo "${uri:-http://deb.debian.org/debian}"
}

# `security_mirror` prints the Debian security mirror this machine's apt
# uses (its -security suite), by default deb.debian.org's.
security_mirror() {
  local uri
  uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep security | head -1)
  [ -z "$uri" ] && uri=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
                         awk '{print $2}' | grep security | head -1)
  echo "${uri:-http://deb.debian.org/debian-security}"
}

# `debian_source PACKAGE VERSION DEST`: Debian's source package PACKAGE at
# VERSION (as dpkg-query's ${source:Version} prints it) from the mirror's
# pool, unpacked into DEST (which must not exist) with Debian's patches
# applied: the exact sources of the installed binary packages.
debian_source() {
  local package=$1 version=${2#*:} dest=$3 pool work file patch
  case $package in lib*) pool=${package:0:4} ;; *) pool=${package:0:1} ;; esac
  pool="$(mirror)/pool/main/$pool/$package"
  work=$(mktemp -d)
  curl -fsSL "$pool/${package}_$version.dsc" -o "$work/dsc"
  # The .dsc's Files section: one "md5 size name" line per part.
  local files
  files=$(awk '/^Files:/ {f = 1; next} /^[^ ]/ {f = 0} f {print $3}' "$work/dsc")
  mkdir -p "$dest"
  for file in $files; do curl -fsSL "$pool/$file" -o "$work/$file"; done
  for file in $files; do
    case $file in *.orig.tar.*) tar -C "$dest" --strip-components=1 -xf "$work/$file" ;; esac
  done
  for file in $files; do
    case $file in *.debian.tar.*) tar -C "$dest" -xf "$work/$file" ;; esac
  done
  if [[ -f $dest/debian/patches/series ]]; then
    while read -r patch; do
      [[ -z $patch || $patch == \#* ]] && continue
      patch -d "$dest" -p1 -s <"$dest/debian/patches/${patch%% *}"
    done <"$dest/debian/patches/series"
  fi
  rm -rf "$work"
}
