#!/usr/bin/env bash
# Real models with real weights per call: hgr.InferenceSession against ONNX Runtime
# and OpenVINO (issue 39, section 1): PP-OCRv4's text detector and recognizer, Silero
# VAD, g2p-id's BERT and ddddocr's quantized reader, as the PyPI wheels that
# scripts/setup.sh pins ship them, each fed as its own library feeds it, a
# YOLOv8n-style detector and the ONNX model zoo's nine architectures with seeded
# random weights (bench/real_models.py says how).
#
#   bench/real_models.sh   (PYTHON: a venv with the hgr package installed, default
#                           build/python-venv; DEVICE: default pocl:0; CALLS: timed
#                           calls per row, default 10; HGR_REAL_MODELS: the wheels,
#                           default build/real-models, which scripts/setup.sh test fills)
#
# Writes the section "Real models" of docs/benchmarks.md (OUTPUT; "-" prints only)
# and keeps it in build/bench-results/real_models.md. A few minutes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
calls="${CALLS:-10}"
source bench/python_bench.sh
python_bench_begin real_models
openvino_peer
export HGR_REAL_MODELS="${HGR_REAL_MODELS:-$root/$build_dir/real-models}"
"$python" bench/real_models.py "$work" "$device" "$calls" "$build_dir/tests/onnx-models" >"$work/table.md"
{
  echo "## Real models"
  echo
  echo "Per-call time of models that PyPI packages ship inside their wheels (pinned by \`scripts/setup.sh\`), each fed"
  echo "as its own library feeds ONNX Runtime, of a YOLOv8n-style detector as torch.onnx exports it, and of the ONNX"
  echo "model zoo's architectures (the \`onnx\` wheel's light models), both with seeded random weights"
  echo "(\`bench/real_models.py\`): one \`hgr.InferenceSession\` per model on"
  echo "$device against ONNX Runtime's CPU provider and OpenVINO's CPU plugin (threads = cores; OpenVINO at f32 and at"
  echo "its default precision, \`bench/peers.py\`) in the same process, taking turns in two phases each: each the"
  echo "median of $calls calls after 3 warm-up calls, the outputs compared with ONNX Runtime's. Measured"
  echo "$started, load average $before at the start and $(loadavg) at the end."
  echo
  echo "    bench/real_models.sh"
  echo
  cat "$work/table.md"
} >"$results/real_models.md"
python_bench_end real_models transformer
