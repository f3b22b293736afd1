#!/usr/bin/env bash
# What tuning gains (`hgr tune`, docs/tuning.md) on the model-zoo models on pocl:0.
#
#   bench/tune.sh                                  the zoo models with GEMM layers (1x1
#                                                  convs) and matmul_layer
#   MODELS="resnet50 squeezenet" ROUNDS=5 RUNS=5 bench/tune.sh
#
# The zoo models are those `scripts/onnx_models.py prepare` writes to
# $BUILD_DIR/onnx-models (with their arange input and expected output); matmul_layer is
# bench/tune_matmul_model.py's transformer layer of MatMuls (BERT-base sizes). Both
# need the venv scripts/setup.sh makes (HGR_ONNX_PYTHON, default
# $BUILD_DIR/onnx-venv/bin/python, else build/onnx-venv's).
#
# Per model: `hgr tune` into a cache directory of its own (its per-layer lines are
# kept in $BUILD_DIR/bench-results/tune-<model>.txt), then ROUNDS rounds, each
# running `hgr run --repeat RUNS` with the limits' tiles (a copy of the same program
# cache without tuning.tsv) and with the tuned ones, one after the other, so both
# see the same machine; a figure is the median of the round medians, and both
# outputs are checked against the zoo's expected output. Environment: BUILD_DIR
# (default build), HGR_ONNX_PYTHON.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build}"
rounds="${ROUNDS:-5}"
runs="${RUNS:-5}"
models="${MODELS:-resnet50 squeezenet densenet121 inception_v1 inception_v2 shufflenet matmul_layer}"
python="${HGR_ONNX_PYTHON:-$build_dir/onnx-venv/bin/python}"
[[ -x "$python" ]] || python="build/onnx-venv/bin/python"
[[ -x "$python" ]] || { echo "bench/tune.sh: no venv with onnx and numpy ($python): run scripts/setup.sh, or set HGR_ONNX_PYTHON" >&2; exit 2; }
hgr="$build_dir/tools/hgr"
results="$build_dir/bench-results"
data="$build_dir/onnx-models"
mkdir -p "$results"
[[ -x "$hgr" ]] || { echo "bench/tune.sh: no $hgr; build hgr_cli first" >&2; exit 1; }
"$python" scripts/onnx_models.py prepare "$data" >&2

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# `hgr run` of the model with cache directory dir: its median, after checking the output.
run_median() {
  local dir="$1" output
  if ! output="$(HGR_CACHE_DIR="$dir" "$hgr" run "$path" --input "$name=$model_input" --expect "0=$expected" \
      --rtol 1e-3 --atol "$atol" --devices pocl:0 --repeat "$runs" 2>&1)"; then
    printf '%s\n' "$output" >&2
    echo "bench/tune.sh: $path with $dir failed or does not match its expected output" >&2
    exit 1
  fi
  printf '%s\n' "$output" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'
}

table="$results/tune.md"
{
  echo "| model | GEMM layers (nodes) | changed | GEMM device ms, limits -> tuned | run ms, limits | run ms, tuned | tuned/limits |"
  echo "|---|---|---|---|---|---|---|"
} > "$table"
for model in $models; do
  path="$data/$model/model.onnx" model_input="$data/$model/input.npy" expected="$data/$model/expected.npy" atol=1e-4
  name="$(sed -n 's/^input //p' "$data/$model/info.txt" 2>/dev/null || true)"
  if [[ "$model" == matmul_layer ]]; then
    "$python" bench/tune_matmul_model.py "$results/matmul"
    name=x path="$results/matmul/matmul_layer.onnx" model_input="$results/matmul/matmul_layer_x.npy"
    expected="$results/matmul/matmul_layer_expected.npy" atol=1e-3
  fi
  tuned="$results/tune-cache-$model"
  plain="$results/tune-cache-$model-limits"
  rm -rf "$tuned" "$plain"
  mkdir -p "$tuned"
  HGR_CACHE_DIR="$tuned" "$hgr" tune "$path" --input "$name=$model_input" --devices pocl:0 --runs 7 \
    > "$results/tune-$model.txt"
  summary="$(grep '^[0-9]* layers' "$results/tune-$model.txt" || echo "0 layers")"
  cp -r "$tuned" "$plain"
  rm -f "$plain/tuning.tsv"
  limits_rounds="" tuned_rounds=""
  for ((r = 0; r < rounds; ++r)); do
    limits_rounds+="$(run_median "$plain")"$'\n'
    tuned_rounds+="$(run_median "$tuned")"$'\n'
  done
  limits_ms="$(printf '%s' "$limits_rounds" | median)"
  tuned_ms="$(printf '%s' "$tuned_rounds" | median)"
  layers="$(echo "$summary" | sed -n 's/^\([0-9]*\) layers (\([0-9]*\) nodes).*/\1 (\2)/p')"
  changed="$(echo "$summary" | sed -n 's/.*; \([0-9]*\) layers changed.*/\1/p')"
  device="$(echo "$summary" | sed -n 's/.*: \([0-9.]*\) ms with the limits.* \([0-9.]*\) ms tuned.*/\1 -> \2/p')"
  ratio="$(awk -v a="$tuned_ms" -v b="$limits_ms" 'BEGIN {printf "%.3f", a / b}')"
  echo "| $model | $layers | $changed | $device | $limits_ms | $tuned_ms | $ratio |" | tee -a "$table"
done
echo "bench/tune.sh: table in $table"
