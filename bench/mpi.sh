#!/usr/bin/env bash
# Across ranks (issue 19, docs/distributed.md), on this machine under mpirun:
#   1. a copy between two ranks through hgr (device read, MPI, device write, ordered by
#      events) against a raw MPI ping-pong of the same bytes (hgr_bench_mpi_copy);
#   2. the pipelined throughput of a model in two stages over two ranks against the
#      same model on one rank (`hgr run --pipeline 2`), median of ROUNDS processes.
#
#   bench/mpi.sh        (BUILD_DIR default build-bench; MODEL default squeezenet, one
#                        of BUILD_DIR/tests/onnx-models or build/tests/onnx-models, else
#                        examples/cnn.json; RUNS default 40; ROUNDS default 3)
#
# Prints the section and writes it into docs/benchmarks.md (OUTPUT) between its
# markers, keeping it in $BUILD_DIR/bench-results/mpi.md for bench/run.sh.
#
# The ranks share this machine's cores: on 2 cores two ranks compete with each other
# (and with MPI's progress threads) for the CPU the one-rank run has to itself, so the
# throughput ratio says what distribution costs here, not what two hosts would gain.
# Open MPI's shared-memory transport is used as configured (CMA single copy where the
# kernel allows it). Prints Markdown.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build-bench}"
output="${OUTPUT:-docs/benchmarks.md}"
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHGR_BUILD_TESTS=OFF >/dev/null
fi
cmake "$build_dir" >/dev/null # finds MPI when it was installed after the first configure
cmake --build "$build_dir" -j2 --target hgr_cli hgr_bench_mpi_copy >/dev/null ||
  { echo "bench/mpi.sh: cannot build hgr_bench_mpi_copy (needs Open MPI: scripts/setup.sh installs it)" >&2; exit 1; }
build_dir="$(cd "$build_dir" && pwd)"
source scripts/testbed_env.sh
testbed_env "$build_dir"
export HGR_CACHE_DIR="$build_dir/bench-cache/mpi"
mkdir -p "$HGR_CACHE_DIR"
hgr="$build_dir/tools/hgr"
copy="$build_dir/bench/hgr_bench_mpi_copy"
mpirun=(mpirun --allow-run-as-root --oversubscribe)
runs="${RUNS:-40}"
rounds="${ROUNDS:-3}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="$work/log"
{
echo "## Across ranks: copies and pipelined stages (bench/mpi.sh)"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1 /proc/loadavg), $(nproc) cores."
echo
echo "### A copy between two ranks against raw MPI"
echo
# Each rank stands for a host of its own: mpirun binds each of the two ranks to a
# core, and PoCL's workers stay there unpinned. The test bed's POCL_AFFINITY=1 pins
# every process's workers to every core, so one rank's driver commands would run on
# the other rank's core (1 MiB: 0.33-0.42 of raw MPI pinned, 0.45-0.52 not;
# bench/notes.md, "Across ranks").
POCL_AFFINITY=0 "${mpirun[@]}" -np 2 "$copy" --seconds "${SECONDS_PER_SIZE:-0.3}"
echo

model="${MODEL:-squeezenet}"
folder="$build_dir/tests/onnx-models/$model"
[[ -f "$folder/model.onnx" ]] || folder="$root/build/tests/onnx-models/$model"
if [[ -f "$folder/model.onnx" ]]; then
  input_name="$(sed -n 's/^input //p' "$folder/info.txt")"
  graph=("$folder/model.onnx" --input "$input_name=$folder/input.npy")
  what="$model (ONNX model zoo)"
else
  graph=(examples/cnn.json --params examples/cnn.params --input x=examples/cnn_x.npy)
  what="examples/cnn.json ($folder is not prepared)"
fi
# per_run <log>: ms per run from "N runs, K in flight: ... (X ms per run)"
per_run() { sed -n 's/.*(\([0-9.]*\) ms per run).*/\1/p' "$1"; }
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
one=() two=()
for ((r = 0; r < rounds; ++r)); do
  "$hgr" run "${graph[@]}" --devices pocl:0 --repeat "$runs" --pipeline 2 >"$log" 2>&1
  one+=("$(per_run "$log")")
  "${mpirun[@]}" -np 2 "$hgr" run "${graph[@]}" --devices r0/pocl:0,r1/pocl:0 --place stages:2 \
    --repeat "$runs" --pipeline 2 >"$log" 2>&1
  two+=("$(per_run "$log")")
done
one_ms="$(printf '%s\n' "${one[@]}" | median)"
two_ms="$(printf '%s\n' "${two[@]}" | median)"
echo "### Pipelined stages: $what, $runs runs with 2 in flight"
echo
echo "| run | ms per run (median of $rounds processes) | runs/s |"
echo "|---|---:|---:|"
awk -v ms="$one_ms" 'BEGIN {printf "| one rank, pocl:0 | %.3f | %.1f |\n", ms, 1000 / ms}'
awk -v ms="$two_ms" 'BEGIN {printf "| two ranks, r0/pocl:0 + r1/pocl:0, stages:2 | %.3f | %.1f |\n", ms, 1000 / ms}'
echo
awk -v a="$one_ms" -v b="$two_ms" 'BEGIN {printf "Throughput two ranks / one rank: %.2f.\n", a / b}'
} | tee "$work/mpi.md"
mkdir -p "$build_dir/bench-results"
cp "$work/mpi.md" "$build_dir/bench-results/mpi.md"
python3 bench/splice_section.py "$output" "$work/mpi.md" mpi
echo "bench/mpi.sh: wrote the section across ranks of $output" >&2
