#!/usr/bin/env bash
# hgr benchmarks: builds them, runs every one on the OpenCL test bed, prints the
# tables and writes them with the machine description to docs/benchmarks.md.
#
#   bench/run.sh              the whole suite (a few minutes)
#   QUICK=1 bench/run.sh      fewer rounds (a smoke test; noisier figures)
#
# Environment: BUILD_DIR (default build-bench, configured RelWithDebInfo if new;
# a sanitizer build is refused), OUTPUT (default docs/benchmarks.md). The test bed
# (PoCL with two pthread devices, rusticl, Oclgrind) is set up as scripts/setup.sh
# does; the PoCL basic-device chain runs with POCL_DEVICES=basic. Needs gcc, CMake,
# the OpenCL loader and headers, cJSON, PoCL and Mesa's rusticl (scripts/setup.sh
# installs them).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build-bench}"
output="${OUTPUT:-docs/benchmarks.md}"
quick="${QUICK:-}"

if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHGR_BUILD_TESTS=OFF >/dev/null
fi
if grep -Eq '^HGR_SANITIZE:STRING=.+' "$build_dir/CMakeCache.txt" ||
   grep -Eq '^CMAKE_BUILD_TYPE:STRING=Debug' "$build_dir/CMakeCache.txt"; then
  echo "bench/run.sh: $build_dir is a Debug or sanitizer build; use an optimized one (BUILD_DIR)" >&2
  exit 2
fi
cmake --build "$build_dir" -j2 --target hgr_cli hgr_bench_chain hgr_bench_copy hgr_bench_create hgr_bench_pipeline \
  >/dev/null

# The test bed, as scripts/setup.sh sets it up; a caller's own settings win.
cmake -DDIR="$build_dir/testbed/vendors" -P tests/testbed.cmake >/dev/null
export OCL_ICD_VENDORS="${OCL_ICD_VENDORS:-$PWD/$build_dir/testbed/vendors}"
export RUSTICL_ENABLE="${RUSTICL_ENABLE:-llvmpipe}"
export POCL_DEVICES="${POCL_DEVICES:-pthread pthread}"

hgr="$build_dir/tools/hgr"
bench="$build_dir/bench"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
targets="$work/targets.md"
: >"$targets"

if [[ -n "$quick" ]]; then
  rounds_chain=11 rounds_two=7 rounds_rusticl=5 rounds_basic=51 copy_seconds=0.2 create_repeat=3 processes=1
  rounds_pipeline=3
else
  rounds_chain=101 rounds_two=51 rounds_rusticl=21 rounds_basic=301 copy_seconds=3 create_repeat=7 processes=3
  rounds_pipeline=9
fi

section() { echo >&2; echo "== $*" >&2; }
run() { # run <file> <command...>: runs it, shows its output, keeps it in <file>
  local file="$1"; shift
  "$@" | tee "$file"
}
# chain <file> <label> <args...>: the chain benchmark in $processes separate
# processes (PoCL's pthread driver changes regime between processes), one table row
# each; a target row, when asked for, is the median process's.
chain() {
  local file="$1" label="$2"; shift 2
  local rows="$work/rows" target_rows="$work/target_rows"
  : >"$rows"
  : >"$target_rows"
  for ((p = 1; p <= processes; ++p)); do
    local name="$label"
    ((processes > 1)) && name="$label, process $p"
    "$bench/hgr_bench_chain" --label "$name" --targets "$target_rows" "$@" | tee -a "$rows"
  done
  cat "$rows" >"$file"
  if [[ -s "$target_rows" ]]; then # the middle one by the measured column
    sort -t'|' -k3 -g "$target_rows" | sed -n "$(((processes + 1) / 2))p" |
      sed "s/, process [0-9]*//" >>"$targets"
  fi
}

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
started="$(date -u '+%Y-%m-%d %H:%M UTC')"

section "devices"
"$hgr" devices | tee "$work/devices.txt" >&2
"$hgr" devices --json >"$work/devices.json"

section "chain of 1,000 small dependent nodes (pthread devices, rusticl)"
"$bench/hgr_bench_chain" --devices pocl:0 --nodes 10 --rounds 1 --header | head -2 >"$work/chain_header.md"
cat "$work/chain_header.md"
chain "$work/chain.md" "one device" --devices pocl:0 --nodes 1000 --rounds "$rounds_chain" --target-ratio 1.05
chain "$work/chain2.md" "two devices, one context" --devices pocl:0,pocl:1 --nodes 1000 --rounds "$rounds_two"
chain "$work/chain3.md" "PoCL and rusticl" --devices pocl:0,rusticl:0 --nodes 100 --rounds "$rounds_rusticl"
section "chain on PoCL's basic device (POCL_DEVICES=basic)"
POCL_DEVICES=basic chain "$work/chain4.md" "one device, basic driver" --devices pocl:0 --nodes 1000 \
  --rounds "$rounds_basic" --target-host-us 0.5

section "copy nodes, 4 KiB to 256 MiB"
run "$work/copy1.md" "$bench/hgr_bench_copy" --from pocl:0 --to pocl:1 --seconds "$copy_seconds" --header \
  --label "pocl:0 → pocl:1" --targets "$targets" --target-ratio 0.95
run "$work/copy2.md" "$bench/hgr_bench_copy" --from pocl:0 --to rusticl:0 --seconds "$copy_seconds" --header \
  --label "pocl:0 → rusticl:0" --targets "$targets" --target-ratio 0.9
run "$work/copy3.md" "$bench/hgr_bench_copy" --from rusticl:0 --to pocl:0 --seconds "$copy_seconds" \
  --label "rusticl:0 → pocl:0" --targets "$targets" --target-ratio 0.9

section "executor creation"
{
  "$bench/hgr_bench_create" --repeat "$create_repeat" examples/simplex.json --device 1=pocl:0 --device 4=rusticl:0
  "$bench/hgr_bench_create" --repeat "$create_repeat" examples/duplex.json --device 1=pocl:0 --device 4=pocl:1 |
    tail -n +3
  "$bench/hgr_bench_create" --repeat "$create_repeat" examples/large.json | tail -n +3
} | tee "$work/create.md"

section "pipelined runs (K in flight) against run-and-wait"
{
  "$bench/hgr_bench_pipeline" examples/cnn.json --params examples/cnn.params --device 1=pocl:0 \
    --device 4=rusticl:0 --runs 40 --rounds "$rounds_pipeline"
  echo
  "$bench/hgr_bench_pipeline" examples/simplex.json --device 1=pocl:0 --device 4=rusticl:0 --runs 200 \
    --rounds "$rounds_pipeline"
  echo
  "$bench/hgr_bench_pipeline" examples/cnn.json --params examples/cnn.params --device 1=pocl:0 \
    --device 4=pocl:1 --runs 200 --rounds "$rounds_pipeline"
  echo
  "$bench/hgr_bench_pipeline" examples/cnn.json --params examples/cnn.params --device 1=pocl:0 \
    --device 4=pocl:1 --queues 2 --runs 200 --rounds "$rounds_pipeline"
} | tee "$work/pipeline.md"
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

# ---- docs/benchmarks.md --------------------------------------------------------------
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
memory="$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
os="$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}" || echo unknown)"
compiler="$(${CC:-cc} --version 2>/dev/null | head -1 || echo unknown)"
# Platform and driver versions per device, from `hgr devices --json`.
fields='.*"spec": "\([^"]*\)".*"platform_version": "\([^"]*\)".*"name": "\([^"]*\)"'
fields+='.*"driver_version": "\([^"]*\)".*'
drivers="$(sed -n "s/$fields/| \`\\1\` | \\3 | \\2 | \\4 |/p" "$work/devices.json")"

mkdir -p "$(dirname "$output")"
{
  cat <<EOF
# Benchmarks

hgr against raw OpenCL host programs doing the same work, on the OpenCL test bed
(PoCL, Mesa rusticl), written by \`bench/run.sh\` on $started. Every figure is a
median of repeated runs in one process, with hgr and the raw baselines interleaved
round by round so that both see the same machine; ratios are what to compare, since
absolute times move a lot on this machine (see Noise). To measure again:

\`\`\`sh
bench/run.sh          # builds into build-bench/, runs everything, rewrites this file
\`\`\`

## Machine

| | |
|---|---|
| CPU | $cpu, $(nproc) vCPUs |
| memory | $memory |
| OS, kernel | $os, Linux $(uname -r) |
| compiler | $compiler |
| build | RelWithDebInfo (\`-O2 -g\`), \`$build_dir\` |
| load average (1, 5, 15 min) | $load_before at the start, $load_after at the end |

| device | name | platform version | driver version |
|---|---|---|---|
$drivers

## Targets

| target | measured | needed | result |
|---|---:|---:|---|
$(cat "$targets")

What each miss costs and why is in "Where the time goes" below.

## 1. A chain of small dependent nodes

Node *k* computes \`value + c\` (even *k*) or \`value * c\` (odd *k*) on 256 float32
elements, *c* being a constant tensor on the node's device; each node depends on
the one before. The graph JSON is generated by the benchmark with two value buffers
per device, as TVM's memory planner would reuse them. hgr: executor created once,
a run is \`hgr_executor_run\` + \`hgr_executor_wait\`. **raw**: the same kernels
(\`kernels/elementwise.cl\`, same NDRange) on one in-order queue per device with
their arguments set once, one \`cl_kernel\` per distinct (op, input, output) — three
for the one-device chain — and an event only where the next command runs on the
other device; it ends with \`clWaitForEvents\` on the last command
(\`bench/raw_chain.c\`). **raw/node** is the same program with one \`cl_kernel\` per
node, as a graph runtime holds them (hgr does: arguments are not thread-safe to
set): the difference between raw and raw/node is what a thousand kernel objects
cost the driver, not hgr. Across devices: two PoCL devices of one context alternate
every node, with a \`__copy\` node (hgr) or a \`clEnqueueCopyBuffer\` on the
consumer's queue waiting on the producer's event (raw) at every switch; PoCL and
rusticl alternate every node (100 nodes, since a rusticl launch costs about
0.35 ms), copies being host-staged by hgr and a blocking read then a write by raw.
"Host" is the calling thread's CPU time, which other processes do not inflate; on
PoCL's basic device (no driver threads) it is all the work. Both results are
checked against a host reference. Each configuration runs in $processes separate
processes (one row each), since PoCL's pthread driver changes regime between
processes; a target is judged on the median process.

$(cat "$work/chain_header.md")
$(cat "$work/chain.md")
$(cat "$work/chain2.md")
$(cat "$work/chain3.md")
$(cat "$work/chain4.md")

## 2. Copy nodes

A graph \`x -> __copy -> output\` with \`x\` set once; a run is one copy. Within one
context (two PoCL devices) raw is \`clEnqueueCopyBuffer\` + \`clWaitForEvents\`.
Across platforms raw is measured three ways: staged (blocking read into host memory,
then blocking write: 2 copies), map source (blocking map of the source, blocking
write from the mapped pointer, unmap: 1 copy) and map destination (the mirror);
hgr is compared with the best of them at each size. \`memcpy\` of the same bytes
between host buffers is the ceiling: every copy on these CPU drivers is a memcpy.
Each raw path is interleaved with hgr and memcpy in its own pass (one raw path can
slow the next command on the same driver); hgr's figures come from the pass of the
best raw path. "hgr enqueue" is the time spent in \`hgr_executor_run\`.

$(cat "$work/copy1.md")

$(cat "$work/copy2.md")
$(cat "$work/copy3.md")

## 3. Executor creation

\`hgr_bench_create\`: the examples' graphs loaded once, then an executor created and
released N times. The first creation builds the kernel programs (PoCL's and Mesa's
own caches may serve them from earlier processes); later ones are served by the
drivers' in-process caches.

$(cat "$work/create.md")

## 4. Pipelined runs

\`hgr_bench_pipeline\`: one executor; a round is N runs either each followed by
\`hgr_executor_wait\`, or kept K in flight through fences (run k + K starts once run
k's fence was waited for); modes interleaved round by round; the median round's
runs per second. The graphs cross platforms (PoCL and rusticl) or two PoCL devices
of one context (with one and with two compute queues). Every device here is the
same two CPU cores, so overlapping runs hides host time and idle gaps rather than
adding compute: where rusticl's half of the CNN dominates a run (about 7 ms of its
7.3), nothing is left to hide; the CNN on two PoCL devices takes 0.14 ms a run,
most of it host time and wake-ups, and gains most. The storage pool is one per
executor, so a later run's write into a storage waits for the earlier run's readers:
runs overlap stage by stage, not whole.

$(cat "$work/pipeline.md")

## Devices

\`\`\`
$(cat "$work/devices.txt")
\`\`\`
EOF
  cat bench/notes.md
} >"$output"
echo >&2
echo "bench/run.sh: wrote $output" >&2
