#!/bin/sh
# check_tune_cli.sh HGR TMP_DIR: `hgr tune` on examples/mlp.json (two dense layers, a softmax)
# on pocl:0 and pocl:1 writes tuning records into a cache directory of its own, and
# `hgr run --verbose` then takes them: it reports each dense node's tile "from
# tuned" and the output still matches the expected values. Exits 77 when pocl is
# absent, 1 with the reason when anything else differs.
hgr="$1"
dir="$2/tune-cli-$$"
rm -rf "$dir"
mkdir -p "$dir" || exit 1
export HGR_CACHE_DIR="$dir"
devices="--device 1=pocl:0 --device 4=pocl:1"
output="$("$hgr" tune examples/mlp.json --params examples/mlp.params --input x=examples/mlp_x.npy $devices --runs 2 2>&1)"
code=$?
printf '%s\n' "$output"
if printf '%s' "$output" | grep -q -e "no device matches" -e "no OpenCL device found"; then
  echo "check_tune_cli.sh: skipped: pocl is absent"
  rm -rf "$dir"
  exit 77
fi
failed=0
[ "$code" -eq 0 ] || { echo "check_tune_cli.sh: FAILED: hgr tune exited $code"; failed=1; }
printf '%s' "$output" | grep -q "candidate 1 of 11" || { echo "check_tune_cli.sh: FAILED: no progress line per candidate"; failed=1; }
# the two dense layers and the softmax's rows (vectors or groups)
printf '%s' "$output" | grep -q "^3 layers (3 nodes)" || { echo "check_tune_cli.sh: FAILED: not 3 layers tuned"; failed=1; }
printf '%s' "$output" | grep -q "tuning records written to $dir/tuning.tsv" || { echo "check_tune_cli.sh: FAILED: no records written"; failed=1; }
[ "$(grep -c 'gemm:' "$dir/tuning.tsv" 2>/dev/null)" = 2 ] || { echo "check_tune_cli.sh: FAILED: tuning.tsv does not hold 2 records"; failed=1; }
output="$("$hgr" run examples/mlp.json --params examples/mlp.params --input x=examples/mlp_x.npy \
  --expect 0=examples/mlp_expected_0.npy $devices --verbose 2>&1)"
code=$?
printf '%s\n' "$output"
[ "$code" -eq 0 ] || { echo "check_tune_cli.sh: FAILED: hgr run exited $code"; failed=1; }
[ "$(printf '%s\n' "$output" | grep -c "tile: node .*(dense): .* from tuned")" = 2 ] ||
  { echo "check_tune_cli.sh: FAILED: hgr run --verbose does not report both dense tiles from tuned"; failed=1; }
printf '%s' "$output" | grep -q "matches examples/mlp_expected_0.npy" || { echo "check_tune_cli.sh: FAILED: output differs"; failed=1; }
rm -rf "$dir"
[ "$failed" -eq 0 ] || exit 1
echo "check_tune_cli.sh: hgr tune wrote records that hgr run took"
