#!/usr/bin/env bash
# Tiny real models per call (issue 39, section 2: the per-run floor): openWakeWord's
# melspectrogram, speech embedding and wake-word heads and Silero VAD, as the wheels
# that scripts/setup.sh pins ship them, each fed as its own library feeds it, through
# hgr.InferenceSession on PoCL's pthread device and on its basic device against ONNX
# Runtime, and through `hgr run` (bench/tiny_models.py says how).
#
#   bench/tiny_models.sh   (PYTHON: a venv with the hgr package installed, default
#                           build/python-venv; CALLS: timed calls per row, default
#                           2000; HGR_REAL_MODELS: the wheels, default build/real-models)
#
# PoCL shows a pthread and a basic device here (POCL_DEVICES="pthread basic"), found
# by name. Writes the section "Tiny models" of docs/benchmarks.md (OUTPUT; "-" prints
# only) and keeps it in build/bench-results/tiny_models.md. About a minute.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
calls="${CALLS:-2000}"
source bench/python_bench.sh
python_bench_begin tiny_models
openvino_peer
export HGR_REAL_MODELS="${HGR_REAL_MODELS:-$root/$build_dir/real-models}"
export POCL_DEVICES="pthread basic"
spec_of() { # spec_of NAME-PREFIX: the spec of the PoCL device whose name starts so
  "$build_dir/tools/hgr" devices | awk -v prefix="$1" '$1 ~ /^pocl:/ && index($0, prefix) { print $1; exit }'
}
pthread="$(spec_of " pthread-")" basic="$(spec_of " basic-")"
if [[ -z "$pthread" || -z "$basic" ]]; then
  echo "bench/tiny_models.sh: PoCL shows no pthread or no basic device (POCL_DEVICES=\"$POCL_DEVICES\")" >&2
  exit 2
fi
"$python" bench/tiny_models.py "$work" "$pthread" "$basic" "$calls" "$build_dir/tools/hgr" >"$work/table.md"
{
  echo "## Tiny models"
  echo
  echo "Per-call time of tiny real models (under a millisecond in ONNX Runtime) as the wheels pinned by"
  echo "\`scripts/setup.sh\` ship them, each fed as its own library feeds ONNX Runtime (\`bench/tiny_models.py\`):"
  echo "one \`hgr.InferenceSession\` per model and device against ONNX Runtime's CPU provider and OpenVINO's CPU"
  echo "plugin (threads = cores; OpenVINO at f32 and at its default precision, \`bench/peers.py\`; the ratios are"
  echo "against ONNX Runtime) in the same process, taking turns in two phases each, the median of $calls calls; PoCL's pthread"
  echo "device ($pthread) runs each command on its driver threads, its basic device ($basic) in the thread that"
  echo "waits for it. \"Python adds\" is the session's call less the same executor's \`run()\` + \`wait()\` with the"
  echo "call's bindings kept; \`hgr run --repeat $calls\` is the C API with the input set once and no output read"
  echo "back. Measured $started, load average $before at the start and $(loadavg) at the end."
  echo
  echo "    bench/tiny_models.sh"
  echo
  cat "$work/table.md"
} >"$results/tiny_models.md"
python_bench_end tiny_models real_models
