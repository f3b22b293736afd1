#!/usr/bin/env bash
# Stripped size of the shared library, with and without the .npy reader and writer
# (HGR_MINIMAL, which sets HGR_HAS_NPY to 0), for the default build type and for
# MinSizeRel. Builds only the library, each configuration in its own directory under
# BUILD_DIR (default build-sizes), never in build/.
#
#   bench/sizes.sh            prints a markdown table (README.md quotes it)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build-sizes}"

# stripped_bytes <build type> <ON|OFF for HGR_MINIMAL>: configures, builds the
# shared library and prints its size in bytes once stripped of symbols and debug info.
stripped_bytes() {
  local dir="$build_dir/$1-minimal-$2"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$1" -DHGR_MINIMAL="$2" -DHGR_BUILD_TESTS=OFF -DHGR_BUILD_BENCH=OFF \
    -DHGR_BUILD_TOOLS=OFF >/dev/null
  cmake --build "$dir" -j2 --target hgr >/dev/null
  local library
  library="$(find "$dir" -name 'libhgr.so.*.*.*' -type f | head -1)"
  [[ -n "$library" ]] || { echo "bench/sizes.sh: no libhgr.so.X.Y.Z in $dir" >&2; exit 1; }
  strip --strip-all -o "$dir/libhgr.stripped.so" "$library"
  stat -c %s "$dir/libhgr.stripped.so"
}

kib() { awk -v b="$1" 'BEGIN { printf "%.0f KiB", b / 1024 }'; }

version="$(sed -n 's/^project(hgr VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
echo "| libhgr.so $version, stripped ($(uname -m), $(${CC:-cc} --version | head -1)) | with .npy | without (\`-DHGR_MINIMAL=ON\`) | the .npy code |"
echo "|---|---:|---:|---:|"
for type in RelWithDebInfo MinSizeRel; do
  with="$(stripped_bytes "$type" OFF)"
  without="$(stripped_bytes "$type" ON)"
  echo "| \`-DCMAKE_BUILD_TYPE=$type\` | $(kib "$with") ($with B) | $(kib "$without") ($without B) | $(kib $((with - without))) |"
done
