#!/usr/bin/env bash
# Placement by the cost model: each example placed with `--place auto` over the test
# bed's real devices (pocl:0, pocl:1, rusticl:0), beside the best single device that
# AUTO compared itself with. Per graph: where AUTO put the nodes, the predicted time
# of one run and the measured one (median of RUNS runs of run + wait, `hgr run
# --repeat`), for both, and the measured ratio single / auto. Prints a Markdown table.
#
#   bench/place.sh [RUNS]      (default 30; BUILD_DIR default build)
#
# The cost cache lives in $BUILD_DIR/bench-cache/place: the first run calibrates
# (progress lines on stderr), later ones read it. Timings are noisy on a busy
# machine: the load average is printed with the table.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="$(cd "${BUILD_DIR:-build}" && pwd)"
runs="${1:-30}"
hgr="$build_dir/tools/hgr"
[[ -x "$hgr" ]] || { echo "bench/place.sh: $hgr not built (scripts/setup.sh demo builds it)" >&2; exit 1; }
cmake -DDIR="$build_dir/testbed/vendors" -P tests/testbed.cmake >/dev/null
export OCL_ICD_VENDORS="${OCL_ICD_VENDORS:-$build_dir/testbed/vendors}"
export RUSTICL_ENABLE="${RUSTICL_ENABLE:-llvmpipe}"
export POCL_DEVICES="${POCL_DEVICES:-pthread pthread}"
export HGR_CACHE_DIR="$build_dir/bench-cache/place"
mkdir -p "$HGR_CACHE_DIR"
devices=pocl:0,pocl:1,rusticl:0

inputs() { # inputs <example>
  case "$1" in
    mlp) echo "--params examples/mlp.params --input x=examples/mlp_x.npy --expect 0=examples/mlp_expected_0.npy" ;;
    cnn) echo "--params examples/cnn.params --input x=examples/cnn_x.npy --expect 0=examples/cnn_expected_0.npy" ;;
    large) echo "--params examples/large.params --input x_small=examples/large_x_small.npy
                 --input x_big=examples/large_x_big.npy --expect 0=examples/large_expected_0.npy" ;;
    duplex) echo "--input A=examples/duplex_A.npy --input B=examples/duplex_B.npy --input C=examples/duplex_C.npy
                  --input D=examples/duplex_D.npy --input E=examples/duplex_E.npy --expect 0=examples/duplex_expected_0.npy" ;;
  esac
}

# run <example> <devices>: prints "PREDICTED MEASURED BEST_SPEC PLACEMENT"
run() {
  local out
  # shellcheck disable=SC2046
  if ! out="$("$hgr" run "examples/$1.json" $(inputs "$1") --devices "$2" --place auto --repeat "$runs")"; then
    echo "bench/place.sh: hgr run of $1 on $2 failed" >&2
    return 1
  fi
  if grep -q "DOES NOT MATCH" <<<"$out"; then echo "bench/place.sh: $1 on $2 gives wrong outputs" >&2; exit 1; fi
  local predicted measured best placement
  predicted="$(sed -n 's/^  predicted \([0-9.]*\) ms per run.*/\1/p' <<<"$out")"
  best="$(sed -n 's/^  predicted .*best single device \([^:]*:[0-9]*\): .*/\1/p' <<<"$out")"
  measured="$(sed -n 's/^[0-9]* runs: min [0-9.]* ms, median \([0-9.]*\) ms.*/\1/p' <<<"$out")"
  placement="$(sed -n 's/^  \([a-z]*:[0-9]*\) (key [0-9]*): \([0-9]*\) nodes.*/\1 \2/p' <<<"$out" | paste -sd, - | sed 's/,/, /g')"
  echo "$predicted|$measured|${best:--}|$placement"
}

echo "Placement by the cost model (bench/place.sh, $runs runs each, $(date -u +%Y-%m-%d), load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| graph | AUTO over $devices: nodes per device | predicted ms | measured ms | best single device | predicted ms | measured ms | measured single / AUTO |"
echo "|---|---|---:|---:|---|---:|---:|---:|"
for example in duplex mlp cnn large; do
  auto="$(run "$example" "$devices")"
  IFS='|' read -r auto_predicted auto_measured best placement <<<"$auto"
  if [[ "$best" == - ]]; then best="${devices%%,*}"; fi
  single="$(run "$example" "$best")"
  IFS='|' read -r single_predicted single_measured _ _ <<<"$single"
  ratio="$(awk -v s="$single_measured" -v a="$auto_measured" 'BEGIN { printf "%.2f", (a > 0 ? s / a : 0) }')"
  echo "| \`$example\` | $placement | $auto_predicted | $auto_measured | $best | $single_predicted | $single_measured | $ratio |"
done
