#!/usr/bin/env bash
# Time to first result and peak memory: hgr against ONNX Runtime on the ONNX
# model-zoo architectures (issue 16, section 4 and the memory target of section 1).
#
#   bench/onnx_startup.sh                          every model (about 20 minutes: cold
#                                                  starts compile for tens of seconds)
#   MODELS="squeezenet resnet50" bench/onnx_startup.sh   only those models
#   WARMUPS="off auto" bench/onnx_startup.sh       the --warm-up modes compared (default
#                                                  "off auto")
#
# Per model, every process on pocl:0 (`hgr run MODEL.onnx --repeat 2`, timed by
# /usr/bin/time -v for its peak RSS; hgr prints its own phase times):
#   - for each --warm-up mode: a cold process, with fresh empty HGR_CACHE_DIR,
#     POCL_CACHE_DIR and XDG_CACHE_HOME (hgr's program cache and PoCL's kernel
#     cache empty: everything compiles, and the process fills them), then a warm
#     process on the caches it filled;
#   - ONNX Runtime (CPU provider, intra-op threads = cores) in a fresh python
#     process: InferenceSession creation, first run, second run, and the process's
#     peak RSS (getrusage), with the RSS of the same interpreter after importing
#     numpy and onnxruntime (before the session) as the baseline. ORT keeps no disk
#     cache, so its cold and warm starts are the same;
#   - for the memory table and a column of the time table, one more warm hgr
#     process with PoCL's ICD alone
#     (OCL_ICD_VENDORS naming only it): the test bed's other OpenCL drivers (Mesa's
#     clover and rusticl, Oclgrind) take about 165 MiB in any process that
#     discovers them, whatever the model.
# hgr's "load + create" is the ONNX load (with the loader's folding) plus executor
# creation: what ORT's session creation covers. "First run" is one run waited for,
# inputs set before it. RSS: the whole process doing the same job (load, create, run
# twice, read the output) for both; the ORT figure minus its interpreter baseline is
# shown too, since a C program pays no interpreter.
# Writes the section "Startup and memory of the ONNX models" of docs/benchmarks.md
# (between its markers) and keeps it in $BUILD_DIR/bench-results/onnx_startup.md.
#
# Environment: BUILD_DIR (default build-bench), OUTPUT (default docs/benchmarks.md;
# "-" prints only), HGR_ONNX_PYTHON (default: $BUILD_DIR/onnx-venv/bin/python, else
# build/onnx-venv's).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build-bench}"
output="${OUTPUT:-docs/benchmarks.md}"
warmups="${WARMUPS:-off auto}"
all_models="bvlc_alexnet densenet121 inception_v1 inception_v2 resnet50 shufflenet squeezenet vgg19 zfnet512"
models="${MODELS:-$all_models}"

python="${HGR_ONNX_PYTHON:-}"
if [[ -z "$python" ]]; then
  python="$build_dir/onnx-venv/bin/python"
  [[ -x "$python" ]] || python="build/onnx-venv/bin/python"
fi
if [[ ! -x "$python" ]]; then
  echo "bench/onnx_startup.sh: no venv with onnx, onnxruntime and numpy ($python): run scripts/setup.sh, or set HGR_ONNX_PYTHON" >&2
  exit 2
fi
if [[ ! -x /usr/bin/time ]]; then
  echo "bench/onnx_startup.sh: needs /usr/bin/time (GNU time, for the peak RSS)" >&2
  exit 2
fi

if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHGR_BUILD_TESTS=OFF >/dev/null
fi
if grep -Eq '^HGR_SANITIZE:STRING=.+' "$build_dir/CMakeCache.txt" ||
   grep -Eq '^CMAKE_BUILD_TYPE:STRING=Debug' "$build_dir/CMakeCache.txt"; then
  echo "bench/onnx_startup.sh: $build_dir is a Debug or sanitizer build; use an optimized one (BUILD_DIR)" >&2
  exit 2
fi
cmake --build "$build_dir" -j2 --target hgr_cli >/dev/null

source scripts/testbed_env.sh
testbed_env "$build_dir"
unset POCL_KERNEL_CACHE MESA_SHADER_CACHE_DISABLE HGR_PROGRAM_CACHE_OFF

hgr="$PWD/$build_dir/tools/hgr"
results="$build_dir/bench-results"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$results"
loadavg() { cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g'; }
light="$("$python" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light"))')"

# The zoo models' input: arange(n).reshape(1, 3, 224, 224) / n, as their expected
# outputs were made from.
"$python" -c 'import numpy as np, sys; n = 3 * 224 * 224; np.save(sys.argv[1], (np.arange(n, dtype=np.float64) / n).astype(np.float32).reshape(1, 3, 224, 224))' "$work/input.npy"

# ONNX Runtime in a fresh process: "baseline_kib create_ms first_ms second_ms peak_kib".
cat >"$work/ort.py" <<'EOF'
import resource, sys, time
import numpy as np
import onnxruntime as ort
def peak_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
model, input_path, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
x = np.load(input_path)
baseline = peak_kib()
start = time.perf_counter()
options = ort.SessionOptions()
options.intra_op_num_threads = threads
session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
created = time.perf_counter()
feed = {session.get_inputs()[0].name: x}
session.run(None, feed)
first = time.perf_counter()
session.run(None, feed)
second = time.perf_counter()
print(baseline, (created - start) * 1e3, (first - created) * 1e3, (second - first) * 1e3, peak_kib())
EOF

# hgr_process <label> <model> <cache dir> [hgr run options]: one process; appends
# "label load_ms create_ms first_ms second_ms peak_kib" to $work/<model>.hgr.
hgr_process() {
  local label="$1" model="$2" caches="$3"; shift 3
  local vendors="$OCL_ICD_VENDORS"
  [[ "$label" == pocl-only ]] && vendors="$work/pocl-only"
  local input_name=data_0 log="$work/run.log"
  case "$model" in resnet50|shufflenet|zfnet512) input_name=gpu_0/data_0 ;; esac
  if ! OCL_ICD_VENDORS="$vendors" HGR_CACHE_DIR="$caches/hgr" POCL_CACHE_DIR="$caches/pocl" XDG_CACHE_HOME="$caches/xdg" \
       MESA_SHADER_CACHE_DIR="$caches/mesa" /usr/bin/time -v "$hgr" run "$light/light_$model.onnx" \
       --input "$input_name=$work/input.npy" --devices pocl:0 --repeat 2 --verbose "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "bench/onnx_startup.sh: $model: hgr run $* failed" >&2
    exit 1
  fi
  awk -v label="$label" '
    /^graph loaded in/ { load = $4 }
    /^executor created in/ { create = $4 }
    /^run 1:/ { first = $3 }
    /^run 2:/ { second = $3 }
    /Maximum resident set size/ { rss = $NF }
    /Elapsed \(wall clock\)/ { n = split($NF, t, ":"); wall = 0; for (i = 1; i <= n; ++i) wall = wall * 60 + t[i] }
    END { print label, load, create, first, second, rss, wall * 1000 }' "$log" >>"$work/$model.hgr"
}

# PoCL's ICD alone, for the memory table.
mkdir -p "$work/pocl-only"
for icd in "$OCL_ICD_VENDORS"/*.icd; do
  grep -q pocl "$icd" && cp "$icd" "$work/pocl-only/"
done

started="$(date -u '+%Y-%m-%d %H:%M UTC')" before="$(loadavg)"
for model in $models; do
  for mode in $warmups; do
    caches="$work/caches-$model-$mode"
    mkdir -p "$caches"
    hgr_process "cold-$mode" "$model" "$caches" --warm-up "$mode"
    hgr_process "warm-$mode" "$model" "$caches" --warm-up "$mode"
    if [[ "$mode" == "${warmups%% *}" ]]; then hgr_process pocl-only "$model" "$caches" --warm-up "$mode"; fi
    rm -rf "$caches"
  done
  # The whole python process too (interpreter, imports, session, two runs), as a user
  # meets it: issue 35's yardstick for the time to a first result.
  /usr/bin/time -f "%e" -o "$work/ort.wall" "$python" "$work/ort.py" "$light/light_$model.onnx" "$work/input.npy" \
    "$(nproc)" >"$work/$model.ort"
  echo " $(awk '{ print $1 * 1000 }' "$work/ort.wall")" >>"$work/$model.ort"
  echo "bench/onnx_startup.sh: $model: $(paste -sd';' "$work/$model.hgr"); ort $(cat "$work/$model.ort")" >&2
done

# The tables, from the per-model records.
"$python" - "$work" "$warmups" $models >"$work/tables.md" <<'EOF'
import sys
work, warmups, models = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
def s(ms): return f"{float(ms) / 1000:.2f}"
rows_time, rows_wall, rows_mem = [], [], []
for model in models:
    hgr = {}
    for line in open(f"{work}/{model}.hgr"):
        label, load, create, first, second, rss, wall = line.split()
        hgr[label] = dict(load=float(load), create=float(create), first=float(first), second=float(second), rss=int(rss),
                          wall=float(wall))
    base, ort_create, ort_first, ort_second, ort_peak, ort_wall = open(f"{work}/{model}.ort").read().split()
    ort_create, ort_first, ort_peak, base = float(ort_create), float(ort_first), int(ort_peak), int(base)
    ort_wall = float(ort_wall)
    ort_total = ort_create + ort_first
    cells = []
    for mode in warmups:
        for state in ("cold", "warm"):
            r = hgr[f"{state}-{mode}"]
            total = r["load"] + r["create"] + r["first"]
            cells.append(f"{s(r['load'] + r['create'])} + {s(r['first'])} = **{s(total)}** ({total / ort_total:.1f} ×)")
    r = hgr["pocl-only"]
    total = r["load"] + r["create"] + r["first"]
    cells.append(f"{s(r['load'] + r['create'])} + {s(r['first'])} = **{s(total)}** ({total / ort_total:.1f} ×)")
    rows_time.append(f"| {model} | " + " | ".join(cells) + f" | {s(ort_create)} + {s(ort_first)} = **{s(ort_total)}** |")
    walls = [hgr[f"{state}-{warmups[0]}"]["wall"] for state in ("cold", "warm")] + [hgr["pocl-only"]["wall"]]
    rows_wall.append(f"| {model} | " + " | ".join(f"{s(w)} ({w / ort_wall:.1f} ×)" for w in walls) +
                     f" | {s(ort_wall)} |")
    warm = hgr[f"warm-{warmups[0]}"]["rss"]
    cold = max(hgr[f"cold-{mode}"]["rss"] for mode in warmups)
    alone = hgr["pocl-only"]["rss"]
    rows_mem.append(f"| {model} | {warm / 1024:.0f} | {cold / 1024:.0f} | {alone / 1024:.0f} | {ort_peak / 1024:.0f} | "
                    f"{base / 1024:.0f} | {(ort_peak - base) / 1024:.0f} | **{warm / ort_peak:.2f}** | "
                    f"**{alone / ort_peak:.2f}** | {alone / max(ort_peak - base, 1):.2f} |")
header = "| model | " + " | ".join(f"hgr {state}, warm-up {mode}" for mode in warmups for state in ("cold", "warm")) + \
    f" | hgr warm, warm-up {warmups[0]}, PoCL's ICD alone | ONNX Runtime |"
print(header)
print("|---|" + "---:|" * (2 * len(warmups) + 2))
print("\n".join(rows_time))
print()
print(f"| model | hgr cold process, warm-up {warmups[0]} | hgr warm process | hgr warm process, PoCL's ICD alone | "
      "ONNX Runtime process |")
print("|---|---:|---:|---:|---:|")
print("\n".join(rows_wall))
print()
print("| model | hgr warm MiB | hgr cold MiB | hgr warm, PoCL's ICD alone MiB | ORT process MiB | ORT after imports MiB | "
      "ORT minus imports MiB | **hgr / ORT** | **hgr, PoCL alone / ORT** | hgr, PoCL alone / (ORT minus imports) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
print("\n".join(rows_mem))
EOF

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
ort_version="$("$python" -c 'import onnxruntime; print(onnxruntime.__version__)')"
{
  cat <<EOF
## Startup and memory of the ONNX models

Time to first result of the ONNX model-zoo architectures (as in the section above)
on hgr (\`--devices pocl:0\`) and ONNX Runtime $ort_version (CPU provider, intra-op
threads = $(nproc)), and the peak memory of the process, written by
\`bench/onnx_startup.sh\` (this run: \`BUILD_DIR=$build_dir WARMUPS="$warmups" bench/onnx_startup.sh\`).
One process per cell. hgr: \`hgr run MODEL.onnx --repeat 2 --warm-up MODE\`;
**cold**: hgr's program cache, PoCL's kernel cache and XDG_CACHE_HOME fresh and
empty (everything compiles, and the process fills the caches); **warm**: the next
process, on the caches the cold one filled. A cell is "load + create + first run =
**total**" in seconds (hgr: loading the ONNX file, with the loader's folding, plus
executor creation, which is what ONNX Runtime's session creation covers; the first
run is one run waited for, inputs set) and, in parentheses, the total / ONNX
Runtime's. ONNX Runtime keeps no disk cache, so its cold and warm starts are the
same. Warm-up \`off\`: the first run compiles each kernel's work-group function
(PoCL, at its first launch); \`auto\`: creation launches each distinct kernel once,
so the first run does not. On PoCL hgr stores no binaries: the programs are left to
PoCL's own kernel cache, which a warm process builds them from (taking a binary
would compile each kernel again for a generic work-group size: README, "Program
cache").
hgr's load includes discovering every OpenCL platform the ICD loader lists: the
test bed's four (PoCL, Mesa's clover and rusticl, Oclgrind), or, in the column "PoCL's
ICD alone", PoCL's only (OCL_ICD_VENDORS naming just it), as on a machine with one
OpenCL driver.
Machine: $cpu, $(nproc) vCPUs, shared with other work: measured $started, load
average $before at the start and $(loadavg) at the end.

EOF
  awk 'BEGIN { RS = ""; ORS = "\n\n" } NR == 1' "$work/tables.md"
  cat <<EOF
The same processes whole, as a user meets them (wall clock from \`/usr/bin/time\`):
\`hgr run\` from exec to exit (the run above, so two runs), and a fresh python process
that imports numpy and onnxruntime, creates the session and runs it twice. This is
issue 35's yardstick for the time to a first result (at most 10 × cold, 1.2 × warm).

EOF
  awk 'BEGIN { RS = ""; ORS = "\n\n" } NR == 2' "$work/tables.md"
  cat <<EOF
Peak resident memory (\`/usr/bin/time -v\`, "Maximum resident set size") of the
process doing the job: hgr \`run --repeat 2\` warm (and cold, where the compiler
adds its own; and warm with PoCL's ICD alone in OCL_ICD_VENDORS: the test bed's
other drivers, Mesa's clover and rusticl and Oclgrind, take about 165 MiB in any
process that discovers them, \`hgr devices\` included), and a python process creating the ONNX Runtime session and running
it twice (getrusage), with the same interpreter's peak after importing numpy and
onnxruntime, before the session, and the difference. The target (issue 16) is hgr
within 1.5 × ONNX Runtime's process.

EOF
  awk 'BEGIN { RS = "" } NR == 3' "$work/tables.md"
} >"$work/onnx_startup.md"
cp "$work/onnx_startup.md" "$results/onnx_startup.md"
cat "$work/onnx_startup.md"
[[ "$output" == "-" ]] && exit 0

python3 bench/splice_section.py "$output" "$work/onnx_startup.md" onnx_startup onnx
echo "bench/onnx_startup.sh: wrote the startup section of $output" >&2
