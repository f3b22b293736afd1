#!/bin/sh
# check_bundle_cli.sh HGR TMP_DIR: `hgr compile` writes a bundle of
# tests/data/symbolic/cnn.onnx for pocl:0 with caches of its own; `hgr run BUNDLE`
# in another process, with hgr's and PoCL's cache directories empty, compiles no
# program from source, gives the output the model gives without a bundle, and
# leaves hgr's program cache empty; a bundle made for rusticl:0 runs there without
# --device; a bundle whose manifest names another driver
# version, another hgr version, or whose program file is corrupt is refused with
# exit 1 and the reason. Exits 77 when pocl is absent, 1 with the reason when
# anything else differs.
hgr="$1"
dir="$2/bundle-cli-$$"
rm -rf "$dir"
mkdir -p "$dir/compile" "$dir/run" "$dir/plain" || exit 1
model=tests/data/symbolic/cnn.onnx
input="x=examples/cnn_x.npy"
failed=0
fail() { echo "check_bundle_cli.sh: FAILED: $1"; failed=1; }
caches() { export HGR_CACHE_DIR="$1/hgr" POCL_CACHE_DIR="$1/pocl" XDG_CACHE_HOME="$1/xdg"; }

caches "$dir/compile"
output="$("$hgr" compile "$model" --input "$input" --device 0=pocl:0 --bundle "$dir/bundle" 2>&1)"
code=$?
printf '%s\n' "$output"
if printf '%s' "$output" | grep -q -e "no device matches" -e "no OpenCL device found"; then
  echo "check_bundle_cli.sh: skipped: pocl is absent"
  rm -rf "$dir"
  exit 77
fi
[ "$code" -eq 0 ] || fail "hgr compile exited $code"
printf '%s' "$output" | grep -q "1 program (1 compiled" || fail "hgr compile did not compile one program"
for f in manifest.json model.onnx program-0.bin; do [ -f "$dir/bundle/$f" ] || fail "the bundle has no $f"; done

caches "$dir/plain"
"$hgr" run "$model" --input "$input" --device 0=pocl:0 --output-dir "$dir/expected" >/dev/null 2>&1 ||
  fail "hgr run $model failed"

caches "$dir/run"
output="$("$hgr" run "$dir/bundle" --input "$input" --verbose --expect 0="$dir/expected/output_0.npy" 2>&1)"
code=$?
printf '%s\n' "$output"
[ "$code" -eq 0 ] || fail "hgr run BUNDLE exited $code"
printf '%s' "$output" | grep -q "1 programs (0 from the program cache, 0 compiled, 1 from the bundle)" ||
  fail "hgr run BUNDLE did not take its one program from the bundle"
printf '%s' "$output" | grep -q "matches $dir/expected/output_0.npy" || fail "the bundle's output differs"
[ -z "$(ls -A "$dir/run/hgr" 2>/dev/null | grep program-)" ] || fail "hgr run BUNDLE stored programs"

# A bundle made for one device runs there without --device, not on the first device
# (pocl:0 on the test bed): rusticl:0's, where the machine has it.
caches "$dir/compile-rusticl"
if "$hgr" compile "$model" --input "$input" --device 0=rusticl:0 --bundle "$dir/bundle-rusticl" >/dev/null 2>&1; then
  caches "$dir/run-rusticl"
  output="$("$hgr" run "$dir/bundle-rusticl" --input "$input" --verbose 2>&1)"
  code=$?
  printf '%s\n' "$output"
  [ "$code" -eq 0 ] || fail "hgr run BUNDLE (rusticl) exited $code"
  printf '%s' "$output" | grep -q "1 programs (0 from the program cache, 0 compiled, 1 from the bundle)" ||
    fail "hgr run BUNDLE (rusticl) compiled: it did not run on the bundle's device"
  printf '%s' "$output" | grep -q -e "-> rusticl:0" || fail "hgr run BUNDLE (rusticl) did not bind rusticl:0"
else
  echo "check_bundle_cli.sh: rusticl:0 is absent: the bundle for it is not checked"
fi

refused() { # NAME EDIT-COMMAND EXPECTED-TEXT
  rm -rf "$dir/$1"
  cp -r "$dir/bundle" "$dir/$1"
  sh -c "$2" || fail "$1: could not edit the copy"
  output="$("$hgr" run "$dir/$1" --input "$input" 2>&1)"
  code=$?
  printf '%s\n' "$output"
  [ "$code" -eq 1 ] || fail "$1: hgr run exited $code, not 1"
  printf '%s' "$output" | grep -q "$3" || fail "$1: the error does not say '$3'"
}
refused driver "sed -i 's/\"driver_version\":[^,]*,/\"driver_version\": \"0.0-other\",/' '$dir/driver/manifest.json'" \
  "FAILED_PRECONDITION: bundle .*driver 0.0-other), which this machine lacks; its devices: .*pocl:0"
refused version "sed -i 's/\"hgr\":[^,]*,/\"hgr\": \"0.0.1\",/' '$dir/version/manifest.json'" \
  "FAILED_PRECONDITION: bundle .*made by hgr 0.0.1 with kernel library"
refused corrupt "printf x | dd of='$dir/corrupt/program-0.bin' bs=1 seek=4000 conv=notrunc 2>/dev/null" \
  "DATA_LOSS: bundle .*program-0.bin: corrupt"
rm -rf "$dir"
[ "$failed" -eq 0 ] || exit 1
echo "check_bundle_cli.sh: a bundle ran with empty caches and its mismatches were refused"
