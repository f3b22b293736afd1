#!/bin/sh
# check_place_roundtrip.sh HGR TMPDIR GRAPH PARAMS "RUN ARGS" PLACE ARGS...
# `hgr place GRAPH --params PARAMS PLACE ARGS -o OUT.json --params-out OUT.params`
# (PARAMS "-": none, for an ONNX model, which carries its weights),
# then `hgr run OUT.json --params OUT.params RUN ARGS` with no placement flags: the
# written graph must load, keep its placement (the run prints the devices the place
# step chose) and give the expected outputs (RUN ARGS carry --expect). Exits 0 when
# all of that holds, 77 when a device is absent, 1 otherwise.
set -u
hgr="$1"; tmp="$2"; graph="$3"; params="$4"; run_args="$5"
shift 5
out="$tmp/placed-$$.json"
out_params="$tmp/placed-$$.params"
if [ "$params" = - ]; then
  place_output="$("$hgr" place "$graph" "$@" -o "$out" --params-out "$out_params" 2>&1)"
else
  place_output="$("$hgr" place "$graph" --params "$params" "$@" -o "$out" --params-out "$out_params" 2>&1)"
fi
code=$?
printf '%s\n' "$place_output"
if [ $code -ne 0 ]; then
  if printf '%s' "$place_output" | grep -q -e "no device matches" -e "no OpenCL device found"; then echo "skipped: a device is absent"; exit 77; fi
  echo "check_place_roundtrip.sh: FAILED: hgr place exited $code"; exit 1
fi
# shellcheck disable=SC2086
run_output="$("$hgr" run "$out" --params "$out_params" $run_args 2>&1)"
code=$?
printf '%s\n' "$run_output"
rm -f "$out" "$out_params"
if [ $code -ne 0 ]; then echo "check_place_roundtrip.sh: FAILED: hgr run of the placed graph exited $code"; exit 1; fi
if printf '%s' "$run_output" | grep -q "DOES NOT MATCH"; then echo "check_place_roundtrip.sh: FAILED: outputs differ"; exit 1; fi
if ! printf '%s' "$run_output" | grep -q "matches"; then echo "check_place_roundtrip.sh: FAILED: nothing compared"; exit 1; fi
# Every device the placement used appears in the run's binding, bound from the file.
for spec in $(printf '%s' "$place_output" | sed -n 's/^ *device \([a-z]*:[0-9]*\).*/\1/p' | sort -u); do
  if ! printf '%s' "$run_output" | grep -q -- "-> $spec .*\[graph\]"; then
    echo "check_place_roundtrip.sh: FAILED: the run does not bind a key to $spec from the file"; exit 1
  fi
done
echo "check_place_roundtrip.sh: PASS"
