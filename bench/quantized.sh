#!/usr/bin/env bash
# Quantized models per call: hgr.InferenceSession against ONNX Runtime, each on a
# float32 model and on its int8 quantization by ONNX Runtime's own tool (issue 38,
# section 5): QDQ squeezenet and resnet50 (quantize_static, int8 weights per channel)
# and a dynamic-quantized BERT-like encoder (quantize_dynamic), with hgr's device
# memory for each (bench/quantized.py says what they are); then the device's rate of
# 8-bit products against its float32 FMAs (hgr_bench_peak -i).
#
#   bench/quantized.sh   (PYTHON: a venv with the hgr package installed, default
#                         build/python-venv; DEVICE: default pocl:0; CALLS: timed calls
#                         per model, default 20; BUILD_DIR: default build, whose
#                         tools/hgr gives the memory)
#
# Writes the section "Quantized models" of docs/benchmarks.md (OUTPUT; "-" prints
# only) and keeps it in build/bench-results/quantized.md. A few minutes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
calls="${CALLS:-20}"
source bench/python_bench.sh
python_bench_begin quantized
hgr="$build_dir/tools/hgr"
[[ -x "$hgr" ]] || { echo "bench/quantized.sh: $hgr not built (cmake --build $build_dir)" >&2; exit 1; }
peak_bench="$build_dir/bench/hgr_bench_peak"
cmake --build "$build_dir" --target hgr_bench_peak >/dev/null
HGR_CLI="$hgr" "$python" bench/quantized.py "$work" "$device" "$calls" >"$work/table.md"
"$peak_bench" -d "$device" -i | sed -n 's/^int8 products //p' >"$work/peak.txt"
{
  echo "## Quantized models"
  echo
  echo "Per-call time of float32 models and of their int8 quantization by ONNX Runtime's own tool, built by"
  echo "\`bench/quantized.py\` (the model-zoo squeezenet and resnet50 with seeded random weights, quantize_static in"
  echo "the QDQ format with int8 weights per channel; a 6-layer, 384-wide BERT-like encoder, quantize_dynamic),"
  echo "one \`hgr.InferenceSession\` per model on $device against ONNX Runtime's CPU provider (intra-op"
  echo "threads = cores) in the same process, taking turns in two phases each (each after 0.2 s of untimed calls,"
  echo "so that neither is timed while the other's threads still spin): each the median of $calls calls"
  echo "after 3 warm-up calls. hgr computes between QuantizeLinear and DequantizeLinear in float32 (docs/onnx.md);"
  echo "ONNX Runtime in integers. Device memory: the bytes of hgr's storages on $device (\`hgr check --json\`),"
  echo "weights and activations. Measured $started, load average $before at the start and $(loadavg) at the end."
  echo
  echo "    bench/quantized.sh"
  echo
  cat "$work/table.md"
  echo
  echo "The rate of 8-bit products accumulated in 32 bits on $device, as an integer GEMM's inner loop makes"
  echo "them, beside the float32 FMA rate (\`hgr_bench_peak -i\`, bench/peak.cl's hgr_peak_imad kernels):"
  echo
  echo "    $(cat "$work/peak.txt")"
} >"$results/quantized.md"
python_bench_end quantized transformer
