#!/usr/bin/env bash
# One session, many input shapes: hgr.InferenceSession against ONNX Runtime (issue 34).
#
#   bench/shapes.sh        (PYTHON: a venv with the hgr package installed, default
#                           build/python-venv, which scripts/setup.sh makes; MODELS: the
#                           model zoo's SqueezeNet, default build/tests/onnx-models/
#                           squeezenet/model.onnx, which scripts/onnx_models.py prepares)
#
# bench/shapes.py times SqueezeNet at 8 image sizes, an encoder at 20 sequence lengths
# and a detector at 3 image sizes (first call at each new shape, split into host
# specialization and the rest; a repeated call; ONNX Runtime's first and repeated
# call), then, in a process of its own per runtime, the encoder over 50 shapes for
# 10,000 calls with the resident memory after the first pass and at the end. Writes
# the section "One session, many shapes" of docs/benchmarks.md (OUTPUT; "-" prints
# only) and keeps it in build/bench-results/shapes.md. About 5 minutes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
source bench/python_bench.sh
python_bench_begin shapes
# One warming pass fills the program and PoCL kernel caches; the second is reported.
"$python" bench/shapes.py timing "$work" pocl:0 >/dev/null
"$python" bench/shapes.py timing "$work" pocl:0 >"$work/timing.md"
for runtime in hgr ort; do "$python" bench/shapes.py memory "$work" "$runtime" >>"$work/memory.jsonl"; done
"$python" bench/shapes.py section "$work" "bench/shapes.sh" >"$results/shapes.md"
python_bench_end shapes onnx_startup
