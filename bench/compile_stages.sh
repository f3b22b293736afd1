#!/usr/bin/env bash
# Where a cold start's time goes (issue 35, section 1): per model, on pocl:0 and on
# rusticl:0, one fresh `hgr run MODEL --verbose` process with hgr's program cache,
# PoCL's kernel cache and Mesa's shader cache empty:
#   kernels   the kernels of the model's program(s): all it launches, and no other
#             (kernels/select.h), from "program cache: miss for ... (N kernels)"
#   load      the ONNX load and import ("graph loaded in"; 0.2 s of it is the ICD
#             loader finding the test bed's four drivers)
#   build     clBuildProgram of the model's program(s): the OpenCL C front end,
#             linking the driver's kernel library, IR optimization (rusticl: to NIR
#             and llvmpipe's code)
#   first launches  PoCL: the work-group functions of each kernel and local size,
#             generated (llvm_workgroup_ir_func_gen) and compiled to machine code
#             (llvm_codegen less the generation), summed from POCL_DEBUG=timing;
#             rusticl: the warm-up (first launches) as hgr times it
#   store     the program binary taken and stored (rusticl; PoCL's programs are left
#             to PoCL's own cache)
#   total     the process's wall time (load, creation, one run, output)
# POCL_DEBUG=timing slows PoCL a little; its rows' totals are from the same process.
# Models: the model zoo's (the onnx wheel's light models, input 1x3x224x224) and
# tests/data/symbolic/cnn.onnx (6 kernel nodes, input 1x3x32x32).
#
#   bench/compile_stages.sh                 every model, both devices (about 5 minutes)
#   MODELS="squeezenet cnn" bench/compile_stages.sh
#
# Writes the section "Where a cold start goes" of docs/benchmarks.md (OUTPUT; "-"
# prints only) and keeps it in $BUILD_DIR/bench-results/compile_stages.md.
# Environment: BUILD_DIR (default build), HGR_ONNX_PYTHON (default
# $BUILD_DIR/onnx-venv/bin/python, else build/onnx-venv's).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build}"
output="${OUTPUT:-docs/benchmarks.md}"
models="${MODELS:-cnn bvlc_alexnet densenet121 inception_v1 inception_v2 resnet50 shufflenet squeezenet vgg19 zfnet512}"
python="${HGR_ONNX_PYTHON:-$build_dir/onnx-venv/bin/python}"
[[ -x "$python" ]] || python="build/onnx-venv/bin/python"
if [[ ! -x "$python" ]]; then
  echo "bench/compile_stages.sh: no venv with onnx and numpy ($python): run scripts/setup.sh, or set HGR_ONNX_PYTHON" >&2
  exit 2
fi
if [[ ! -x "$build_dir/tools/hgr" ]]; then
  echo "bench/compile_stages.sh: no $build_dir/tools/hgr: build first (cmake --build $build_dir)" >&2
  exit 2
fi
source scripts/testbed_env.sh
testbed_env "$build_dir"
unset POCL_KERNEL_CACHE MESA_SHADER_CACHE_DISABLE HGR_PROGRAM_CACHE_OFF
hgr="$PWD/$build_dir/tools/hgr"
results="$build_dir/bench-results"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$results"
light="$("$python" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light"))')"
"$python" -c 'import numpy as np, sys; n = 3 * 224 * 224; np.save(sys.argv[1], (np.arange(n, dtype=np.float64) / n).astype(np.float32).reshape(1, 3, 224, 224))' "$work/input.npy"
loadavg() { cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g'; }

# one <model> <device>: appends "model device kernels load build wg codegen warm store total" to $work/rows
one() {
  local model="$1" device="$2" path input
  case "$model" in
    cnn) path=tests/data/symbolic/cnn.onnx input="x=examples/cnn_x.npy" ;;
    resnet50|shufflenet|zfnet512) path="$light/light_$model.onnx" input="gpu_0/data_0=$work/input.npy" ;;
    *) path="$light/light_$model.onnx" input="data_0=$work/input.npy" ;;
  esac
  local caches="$work/caches" log="$work/log"
  rm -rf "$caches"
  mkdir -p "$caches"
  local start end
  start="$(date +%s.%N)"
  if ! HGR_CACHE_DIR="$caches/hgr" POCL_CACHE_DIR="$caches/pocl" XDG_CACHE_HOME="$caches/xdg" \
       MESA_SHADER_CACHE_DIR="$caches/mesa" POCL_DEBUG=timing \
       "$hgr" run "$path" --input "$input" --devices "$device" --verbose >"$log" 2>&1; then
    cat "$log" >&2
    echo "bench/compile_stages.sh: $model on $device failed" >&2
    exit 1
  fi
  end="$(date +%s.%N)"
  "$python" - "$log" "$model" "$device" "$(echo "$end - $start" | bc)" >>"$work/rows" <<'EOF'
import re, sys
log, model, device, total = sys.argv[1:5]
text = re.sub(r"\x1b\[[0-9;]*m", "", open(log, errors="replace").read())
unit = {"s": 1000.0, "ms": 1.0, "us": 1e-3, "ns": 1e-6}
def timed(name):
    return sum(float(v) * unit[u] for v, u in re.findall(r">>>\s+([0-9.]+)\s+(s|ms|us|ns)\s+API: " + name, text))
def one(pattern):
    m = re.search(pattern, text, re.M)
    return float(m.group(1)) if m else 0.0
kernels = sum(int(k) for k in re.findall(r"program cache: miss for .*\((\d+) kernels?\)", text))
wg, codegen = timed("llvm_workgroup_ir_func_gen"), timed("llvm_codegen")
print(model, device, kernels, one(r"^graph loaded in ([0-9.]+) ms"), one(r"compiled[^)]*\) in ([0-9.]+) ms"),
      f"{wg:.1f}", f"{codegen - wg:.1f}", one(r"warm-up: \d+ steps in ([0-9.]+) ms"),
      one(r"programs stored in ([0-9.]+) ms"), total)
EOF
}

started="$(date -u '+%Y-%m-%d %H:%M UTC')" before="$(loadavg)"
for model in $models; do
  for device in pocl:0 rusticl:0; do
    one "$model" "$device"
    echo "bench/compile_stages.sh: $(tail -1 "$work/rows")" >&2
  done
done
after="$(loadavg)"

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
{
  cat <<EOF
## Where a cold start goes

Each model's first \`hgr run\` with every cache empty (hgr's program cache, PoCL's
kernel cache, Mesa's shader cache), on pocl:0 and rusticl:0, split by stage. **kernels**:
what the model's one program holds, which is every kernel it launches and no other
(\`kernels/select.h\`); **load**: ONNX load and import, of which about 0.2 s is the ICD
loader finding the test bed's four drivers; **build**: \`clBuildProgram\` (the OpenCL C
front end, linking the driver's kernel library, IR optimization); **work-group IR** and
**code generation**: PoCL's work at each kernel's first launch per local size
(\`POCL_DEBUG=timing\`: \`llvm_workgroup_ir_func_gen\`, and \`llvm_codegen\` less it), summed;
**warm-up**: hgr's launch of each distinct kernel at creation, which holds those first
launches (on rusticl, llvmpipe's compilation); **store**: taking and storing the
program's binary (rusticl only: PoCL's programs are left to PoCL's cache); **total**:
the process's wall time. Seconds. Machine: $cpu, 2 vCPUs, shared; measured $started,
load average $before at the start and $after at the end.

Command: \`bench/compile_stages.sh\`

| model | device | kernels | load | build | work-group IR | code generation | warm-up | store | **total** |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
EOF
  awk '
    function s(ms) { return sprintf("%.2f", ms / 1000) }
    { device = $2; wg = device ~ /pocl/ ? s($6) : "-"; cg = device ~ /pocl/ ? s($7) : "-"
      printf "| %s | %s | %d | %s | %s | %s | %s | %s | %s | **%.2f** |\n", $1, $2, $3, s($4), s($5), wg, cg, s($8), s($9), $10 }' "$work/rows"
} >"$results/compile_stages.md"
if [[ "$output" == - ]]; then
  cat "$results/compile_stages.md"
else
  python3 bench/splice_section.py "$output" "$results/compile_stages.md" compile_stages onnx_startup
  echo "bench/compile_stages.sh: wrote the section into $output (and $results/compile_stages.md)"
fi
