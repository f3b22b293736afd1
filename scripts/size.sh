#!/usr/bin/env bash
# hgr footprint: the stripped sizes of what a build made, as an embedder ships them.
#
#   scripts/size.sh BUILD_DIR...
#
# For each build directory (native, a cross build, an HGR_MINIMAL one) it strips
# copies of libhgr.so, libhgr.a and the hgr program with the build's own strip
# (CMAKE_STRIP in its CMakeCache.txt: the target's, e.g. aarch64-linux-gnu-strip)
# and prints their sizes in bytes (stat) beside the unstripped ones. The shared
# library is stripped of everything but its dynamic symbols (strip
# --strip-unneeded), the archive of debug information (strip -g: its objects must
# still link), the program of everything.
set -euo pipefail
if (($# == 0)); then
  echo "usage: scripts/size.sh BUILD_DIR..." >&2
  exit 2
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf '%-40s %-14s %12s %12s\n' "build" "file" "bytes" "stripped"
for dir in "$@"; do
  cache="$dir/CMakeCache.txt"
  if [[ ! -f "$cache" ]]; then
    echo "scripts/size.sh: $dir is not a CMake build directory" >&2
    exit 1
  fi
  strip="$(sed -n 's/^CMAKE_STRIP:FILEPATH=//p' "$cache")"
  [[ -n "$strip" ]] || strip=strip
  build_type="$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$cache")"
  label="$(basename "$dir") ${build_type:-?}"
  grep -q '^HGR_MINIMAL:BOOL=ON' "$cache" && label+=" minimal"
  for entry in "runtime/libhgr.so:--strip-unneeded" "runtime/libhgr.a:-g" "tools/hgr:--strip-all"; do
    file="$dir/${entry%%:*}"
    [[ -e "$file" ]] || continue
    copy="$work/$(basename "$file")"
    cp -L "$file" "$copy"
    "$strip" "${entry##*:}" "$copy"
    printf '%-40s %-14s %12s %12s\n' "$label" "$(basename "$file")" "$(stat -L -c %s "$file")" "$(stat -c %s "$copy")"
  done
done
