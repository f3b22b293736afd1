#!/usr/bin/env bash
# Transformers per call: hgr.InferenceSession against ONNX Runtime and OpenVINO (issue 37, section
# 5): a BERT-like encoder (6 layers, 384 wide, 12 heads, opset 14 as torch.onnx
# writes it) at batch 1 x 16, 128, 512 tokens and 8 x 128, a ViT-S/16 on a 224 x 224
# image, and an encoder as ONNX Runtime's transformer optimizer writes it (its
# com.microsoft Attention) at 1 x 128 and 1 x 512 (bench/transformer.py says what they
# are), then where hgr's time goes: `hgr run --profile` of the encoder at 1 x 128, its
# GEMMs' and attention's share and GFLOP/s beside the FMA peak (hgr_bench_peak).
#
#   bench/transformer.sh   (PYTHON: a venv with the hgr package installed, default
#                           build/python-venv; DEVICE: default pocl:0; CALLS: timed
#                           calls per shape, default 20; BUILD_DIR: default build)
#
# Writes the section "Transformers" of docs/benchmarks.md (OUTPUT; "-" prints only)
# and keeps it in build/bench-results/transformer.md, the profile in
# build/bench-results/transformer-profile.txt. A few minutes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
calls="${CALLS:-20}"
source bench/python_bench.sh
python_bench_begin transformer
openvino_peer
hgr="$build_dir/tools/hgr"
[[ -x "$hgr" ]] || { echo "bench/transformer.sh: $hgr not built (cmake --build $build_dir)" >&2; exit 1; }
"$python" bench/transformer.py "$work" "$device" "$calls" >"$work/table.md"
"$python" bench/transformer.py feeds "$work"
"$hgr" run "$work/encoder.onnx" --devices "$device" --input input_ids="$work/input_ids.npy" \
  --input attention_mask="$work/attention_mask.npy" --input token_type_ids="$work/token_type_ids.npy" \
  --repeat 10 --profile >"$results/transformer-profile.txt"
cmake --build "$build_dir" --target hgr_bench_peak >/dev/null
"$build_dir/bench/hgr_bench_peak" -d "$device" >"$work/peak.txt"
peak="$(sed -n 's/^peak [^ ]* \([0-9.]*\) GFLOP.*/\1/p' "$work/peak.txt")"
{
  echo "## Transformers"
  echo
  echo "Per-call time of a BERT-like encoder and a ViT-S/16 built by \`bench/transformer.py\` from"
  echo "\`python/tests/transformer_models.py\` (seeded random weights, written as torch.onnx writes them),"
  echo "and of an encoder after ONNX Runtime's transformer optimizer (its com.microsoft Attention,"
  echo "SkipLayerNormalization, BiasGelu; 6 layers, 384 wide, FFN 384), run as written,"
  echo "one \`hgr.InferenceSession\` per model on $device against ONNX Runtime's CPU provider and OpenVINO's CPU"
  echo "plugin (threads = cores; OpenVINO at f32 and at its default precision, \`bench/peers.py\`) in the same"
  echo "process, taking turns in two phases each (each after 0.2 s of untimed calls, so that none is timed while"
  echo "another's threads still spin): each the median of $calls calls after 3 warm-up calls, the outputs compared"
  echo "with ONNX Runtime's. Measured $started, load average $before at the start and $(loadavg) at the end."
  echo
  echo "    bench/transformer.sh"
  echo
  cat "$work/table.md"
  echo
  echo "Where the encoder's call at batch 1 x 128 goes (\`hgr run encoder.onnx --repeat 10 --profile\` on $device,"
  echo "the last run's profile; FLOP from the model's sizes), beside the FMA peak that \`hgr_bench_peak\` measured"
  echo "right after:"
  echo
  "$python" bench/transformer.py profile "$results/transformer-profile.txt" "$peak"
  echo
  echo "    $(cat "$work/peak.txt")"
} >"$results/transformer.md"
python_bench_end transformer recurrent
echo "bench/transformer.sh: the encoder's profile at 1 x 128 is in $results/transformer-profile.txt"
