#!/usr/bin/env bash
# Host-side profile of the chain benchmark: the measurements behind "Where the time
# goes" in docs/benchmarks.md (bench/notes.md), so they can be taken again.
#
#   bench/profile_host.sh            all of them (about 5 minutes)
#   STEPS="callgrind perf" bench/profile_host.sh
#
# Steps:
#   callgrind  instructions, L1 data read misses and L1 instruction misses per node
#              inside hgr_executor_run + hgr_executor_wait (hgr) or raw_chain_enqueue +
#              raw_chain_wait (raw, raw/node), chain of 1,000 nodes on PoCL's basic
#              device (all work in the calling thread); then hgr's own functions by
#              inclusive instructions per node.
#   perf       `perf record` of hgr, raw and raw/node alone (hgr_bench_chain --only)
#              on the basic device: the top entries by self time.
#   profile    `hgr run --profile` on the same chain graph on the pthread device:
#              device busy time against the span, host enqueue per node.
#   copy       the 4 KiB same-context copy (pocl:0 → pocl:1): hgr against
#              clEnqueueCopyBuffer + clWaitForEvents.
# Results go to stdout and the raw profiles to $BUILD_DIR/profile/. Uses the build and
# the caches of bench/run.sh (BUILD_DIR, default build-bench). valgrind and perf are
# installed with apt-get when missing (as root).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build-bench}"
steps="${STEPS:-callgrind perf profile copy}"
nodes=1000 rounds=20 warmup=2

# need <command> <Debian package>: installs the package when the command is missing.
need() {
  command -v "$1" >/dev/null && return
  dpkg -s "$2" >/dev/null 2>&1 && return
  echo "bench/profile_host.sh: installing $2 for $1" >&2
  apt-get install -y "$2" >/dev/null
}

if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHGR_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build_dir" -j2 --target hgr_cli hgr_bench_chain hgr_bench_copy >/dev/null
cmake -DDIR="$build_dir/testbed/vendors" -P tests/testbed.cmake >/dev/null
export OCL_ICD_VENDORS="${OCL_ICD_VENDORS:-$PWD/$build_dir/testbed/vendors}"
export RUSTICL_ENABLE="${RUSTICL_ENABLE:-llvmpipe}"
caches="$PWD/$build_dir/bench-cache"
export XDG_CACHE_HOME="$caches/xdg" HGR_CACHE_DIR="$caches/hgr" POCL_CACHE_DIR="$caches/pocl"
export MESA_SHADER_CACHE_DIR="$caches/mesa"
out="$build_dir/profile"
mkdir -p "$out"
chain="$build_dir/bench/hgr_bench_chain"
chain_args=(--devices pocl:0 --nodes "$nodes" --rounds "$rounds" --warmup "$warmup")
# A run outside the profilers first, so that the kernels come from the caches, not
# from a compile under valgrind.
POCL_DEVICES=basic "$chain" "${chain_args[@]}" --rounds 1 >/dev/null

step_callgrind() {
  need valgrind valgrind
  echo "## callgrind: per node inside run + wait, chain of $nodes nodes on PoCL's basic device"
  echo "($((rounds + warmup)) runs each; valgrind $(valgrind --version | sed 's/valgrind-//'))"
  echo
  echo "| variant | instructions | L1d read misses | I1 misses |"
  echo "|---|---:|---:|---:|"
  local variant file toggles
  for variant in raw raw/node hgr; do
    file="$out/callgrind.${variant/\//-}.out"
    if [[ "$variant" == hgr ]]; then toggles=(--toggle-collect=hgr_executor_run --toggle-collect=hgr_executor_wait)
    else toggles=(--toggle-collect=raw_chain_enqueue --toggle-collect=raw_chain_wait); fi
    POCL_DEVICES=basic valgrind --tool=callgrind --cache-sim=yes "${toggles[@]}" --callgrind-out-file="$file" \
      "$chain" "${chain_args[@]}" --only "$variant" >/dev/null 2>"$file.log"
    # "events:" names the columns of the "totals:" line
    awk -v variant="$variant" -v per=$(((rounds + warmup) * nodes)) '
      /^events:/ { for (i = 2; i <= NF; ++i) column[$i] = i }
      /^totals:/ { printf "| %s | %.0f | %.1f | %.1f |\n", variant, $column["Ir"] / per, $column["D1mr"] / per,
                     $column["I1mr"] / per }' "$file"
  done
  echo
  echo "hgr's functions by inclusive instructions per node (callgrind_annotate --inclusive=yes):"
  echo
  echo '```'
  callgrind_annotate --inclusive=yes --show=Ir "$out/callgrind.hgr.out" 2>/dev/null |
    awk -v per=$(((rounds + warmup) * nodes)) '
      $1 ~ /^[0-9,]+$/ && $NF ~ /^\[/ && $(NF - 1) ~ /^runtime\// { ir = $1; gsub(",", "", ir)
        if (ir / per >= 20 && ++shown <= 30) printf "%8.0f  %s\n", ir / per, $(NF - 1) }'
  echo '```'
  echo
}

step_perf() {
  need perf linux-perf
  echo "## perf: top entries by self time, chain of $nodes nodes on PoCL's basic device"
  local variant file
  for variant in raw raw/node hgr; do
    file="$out/perf.${variant/\//-}.data"
    # enough runs that they, not the process's start, fill the profile
    POCL_DEVICES=basic perf record -q -o "$file" -- "$chain" "${chain_args[@]}" --rounds 2000 --only "$variant" \
      >/dev/null 2>&1
    perf report -i "$file" --no-children --sort dso,symbol --stdio >"$file.txt" 2>/dev/null
    echo
    echo "### $variant"
    echo
    echo '```'
    awk '!/^#/ && NF { sub(/[ -]+$/, ""); gsub(/  +/, "  "); print; if (++shown == 15) exit }' "$file.txt"
    echo '```'
  done
  echo
}

step_profile() {
  echo "## hgr run --profile: the same chain on the pthread device"
  echo
  POCL_DEVICES="pthread pthread" "$chain" --devices pocl:0 --nodes "$nodes" --rounds 1 \
    --write-graph "$out/chain.json" >/dev/null
  echo '```'
  POCL_DEVICES="pthread pthread" "$build_dir/tools/hgr" run "$out/chain.json" --device 1=pocl:0 \
    --input x="$out/chain_x.npy" --input c0="$out/chain_c0.npy" --repeat 20 --profile 2>&1 | awk '/^by node/ { exit } { print }'
  echo '```'
  echo
}

step_copy() {
  echo "## 4 KiB copy within one context (pocl:0 → pocl:1)"
  echo
  POCL_DEVICES="pthread pthread" "$build_dir/bench/hgr_bench_copy" --from pocl:0 --to pocl:1 --min-bytes 4096 \
    --max-bytes 4096 --seconds 3 --header --label "pocl:0 → pocl:1"
  echo
}

for step in $steps; do
  case "$step" in
    callgrind | perf | profile | copy) "step_$step" ;;
    *) echo "bench/profile_host.sh: unknown step '$step' (steps: callgrind perf profile copy)" >&2; exit 2 ;;
  esac
done
