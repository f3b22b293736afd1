#!/usr/bin/env bash
# The dot variant of the GEMM (hgr_gemm_1x16_4x4_k1_dot, B stored [N, K]: dense)
# against the tiled variants the rule took before it, on the shapes of docs/ops.md's
# dense table, with hgr_bench_gemm (bench/bench_gemm.c: the kernels launched directly,
# interleaved run by run, median wall and CPU time).
#
#   bench/gemm_dot.sh                    pocl:0 and rusticl:0
#   DEVICES=pocl:0 REPEATS=51 bench/gemm_dot.sh
#
# Environment: BUILD_DIR (default build), DEVICES, REPEATS (default 21 on PoCL; 3 on
# rusticl, whose llvmpipe runs these shapes 50-100x slower). Prints the load average
# before each device: the figures are only comparable within one block.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build}"
bench="$build_dir/bench/hgr_bench_gemm"
[[ -x "$bench" ]] || { echo "bench/gemm_dot.sh: no $bench; build hgr_bench_gemm first" >&2; exit 1; }
# shellcheck source=scripts/testbed_env.sh
source scripts/testbed_env.sh
testbed_env "$build_dir"

# M N K, then the variants: the rule's before (pocl, rusticl) and others near them
shapes=(
  "64 2048 1024 8x16_4x16_k32 4x4_8x8_k16"   # a CRNN's LSTM input projection
  "64 37 512 4x16_4x16_k32 2x2_8x8_k16 1x1_8x8_k16" # its classifier
  "63 256 64 8x16_4x16_k32 4x4_8x8_k16"      # a streaming LSTM's projection
  "512 512 512 8x32_4x16_k32 4x16_4x16_k32"  # bench_ops' dense
  "1024 256 64 8x32_4x16_k32 4x16_4x16_k32"  # tall, shallow
  "8 2048 1024 8x16_4x16_k32 1x1_8x8_k16"    # few rows
)
for device in ${DEVICES:-pocl:0 rusticl:0}; do
  repeats="${REPEATS:-21}"
  [[ "$device" == rusticl* && -z "${REPEATS:-}" ]] && repeats=3
  echo "== $device, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  for shape in "${shapes[@]}"; do
    read -r m n k variants <<<"$shape"
    # shellcheck disable=SC2086
    "$bench" -d "$device" -r "$repeats" "$m" "$n" "$k" $variants 1x16_4x4_k1_dot
  done
done
