#!/usr/bin/env bash
# Recurrent models and NMS per call: hgr.InferenceSession against ONNX Runtime (issue 36,
# section 4): a streaming voice-activity-like model per 512-sample chunk (its states
# through host memory, and chained on the device with io_binding where the session
# has it), a CRNN text recognizer and the NonMaxSuppression ending a detector
# (bench/recurrent.py says what they are).
#
#   bench/recurrent.sh     (PYTHON: a venv with the hgr package installed, default
#                           build/python-venv; DEVICE: default pocl:0; CALLS: chunks
#                           of the streaming model, default 1000)
#
# Writes the section "Recurrent models" of docs/benchmarks.md (OUTPUT; "-" prints
# only) and keeps it in build/bench-results/recurrent.md. About a minute.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
calls="${CALLS:-1000}"
source bench/python_bench.sh
python_bench_begin recurrent
"$python" bench/recurrent.py "$work" "$device" "$calls" >"$work/table.md"
{
  echo "## Recurrent models and NMS"
  echo
  echo "Per-call time of two recurrent models and a detector's NonMaxSuppression built by \`bench/recurrent.py\` (seeded random weights; its"
  echo "docstring describes them), one \`hgr.InferenceSession\` on $device against ONNX Runtime's CPU provider"
  echo "(intra-op threads = cores) in the same process, after 10 warm-up calls (the streaming model: the"
  echo "whole loop over its chunks; the crnn and the detector: the median call), the outputs compared. Measured $started,"
  echo "load average $before at the start and $(loadavg) at the end."
  echo
  echo "    bench/recurrent.sh"
  echo
  cat "$work/table.md"
} >"$results/recurrent.md"
python_bench_end recurrent shapes
