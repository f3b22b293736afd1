#!/usr/bin/env bash
# What tuning gains (`hgr tune`, docs/tuning.md) on the model-zoo models on pocl:0.
#
#   bench/tune.sh                                  the zoo models with GEMM layers (1x1
#                                                  convs) and matmul_layer
#   MODELS="resnet50 squeezenet" ROUNDS=5 RUNS=5 bench/tune.sh
#
# matmul_layer is bench/tune_matmul_model.py's transformer layer of MatMuls (BERT-base
# sizes), written with HGR_ONNX_PYTHON (default /tmp/venv15/bin/python).
#
# Per model: `hgr tune` into a cache directory of its own (its per-layer lines are
# kept in $BUILD_DIR/bench-results/tune-<model>.txt), then ROUNDS rounds, each
# running `hgr run --repeat RUNS` with the limits' tiles (a copy of the same program
# cache without tuning.tsv) and with the tuned ones, one after the other, so both
# see the same machine; a figure is the median of the round medians, and both
# outputs are checked against the zoo's expected output. Environment: BUILD_DIR
# (default build), ONNX_LIGHT (the directory of onnx's light_*.onnx models),
# INPUT (the models' input array, default /tmp/light_x.npy).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build}"
rounds="${ROUNDS:-5}"
runs="${RUNS:-5}"
models="${MODELS:-resnet50 squeezenet densenet121 inception_v1 inception_v2 shufflenet matmul_layer}"
python="${HGR_ONNX_PYTHON:-/tmp/venv15/bin/python}"
light="${ONNX_LIGHT:-/tmp/venv15/lib/python3.11/site-packages/onnx/backend/test/data/light}"
input="${INPUT:-/tmp/light_x.npy}"
hgr="$build_dir/tools/hgr"
results="$build_dir/bench-results"
mkdir -p "$results"
[[ -x "$hgr" ]] || { echo "bench/tune.sh: no $hgr; build hgr_cli first" >&2; exit 1; }

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
  name=data_0 path="$light/light_$model.onnx" model_input="$input" expected="$light/light_${model}_output_0.pb" atol=1e-4
  case "$model" in resnet50 | shufflenet | zfnet512) name=gpu_0/data_0 ;; esac
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
