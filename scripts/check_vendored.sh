#!/usr/bin/env bash
# Checks that every file docs/vendored.md lists is still the upstream file,
# byte for byte: its git blob id (git hash-object) must be the one in its
# row, which is the id the file has at that commit upstream. A CTest
# (vendored_files). Exits 1 naming each file that differs or is missing,
# and when the table lists nothing (a table this script cannot read).
set -euo pipefail
cd "$(dirname "$0")/.."

checked=0
failed=0
# A row: | `file here` | upstream | `path there` | commit | blob |
while IFS='|' read -r _ here _ _ _ blob _; do
  here=$(tr -d '` ' <<<"$here")
  blob=$(tr -d ' ' <<<"$blob")
  checked=$((checked + 1))
  if [ ! -f "$here" ]; then
    echo "FAIL $here: missing" >&2
    failed=1
  elif actual=$(git hash-object "$here") && [ "$actual" != "$blob" ]; then
    echo "FAIL $here: blob $actual, upstream's is $blob: edited since it was vendored" >&2
    failed=1
  else
    echo "ok   $here"
  fi
done < <(grep -E '^\| `[^`]+` \|' docs/vendored.md)

if [ "$checked" -eq 0 ]; then
  echo "FAIL docs/vendored.md lists no file" >&2
  exit 1
fi
exit "$failed"
