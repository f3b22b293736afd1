#!/bin/sh
# run_cli.sh EXPECTED_EXIT PATTERN PROGRAM ARGS...
# Runs the hgr program and shows its output, then checks both expectations itself:
# the exit code must be EXPECTED_EXIT and, unless PATTERN is empty, the output
# (stdout and stderr together) must match PATTERN, an extended regular expression
# matched against the whole output as one string, so `.` also matches a newline
# (as in CMake's regexes). Exits 0 when both hold, 1 otherwise, naming what failed.
# The CLI tests therefore set no PASS_REGULAR_EXPRESSION: with one, CTest would
# ignore this script's exit code. A run that was meant to succeed but found no
# device for a --device spec is reported as skipped (77): the platform is absent.
# So is a run whose checks failed on a machine with no OpenCL device at all ("no
# OpenCL device found", or the ICD loader's CL_PLATFORM_NOT_FOUND_KHR: a cross
# build's tests under qemu-user), unless the pattern expects that message.
if [ "$#" -lt 3 ]; then
  echo "usage: run_cli.sh EXPECTED_EXIT PATTERN PROGRAM ARGS..." >&2
  exit 2
fi
expected="$1"
pattern="$2"
shift 2
output="$("$@" 2>&1)"
code=$?
printf '%s\n' "$output"
no_device_at_all() {
  case "$pattern" in *"no OpenCL device found"* | *CL_PLATFORM_NOT_FOUND_KHR*) return 1 ;; esac
  printf '%s' "$output" | grep -q -e "no OpenCL device found" -e "CL_PLATFORM_NOT_FOUND_KHR"
}
failed=0
if [ "$code" -ne "$expected" ]; then
  if [ "$expected" -eq 0 ] && printf '%s' "$output" | grep -q "no device matches"; then
    echo "run_cli.sh: skipped: a device this test binds is absent"
    exit 77
  fi
  echo "run_cli.sh: FAILED: exit code $code, expected $expected"
  failed=1
fi
# -z reads the output as one record: newlines are ordinary characters to `.`.
if [ -n "$pattern" ] && ! printf '%s' "$output" | grep -Ezq -e "$pattern"; then
  echo "run_cli.sh: FAILED: the output does not match: $pattern"
  failed=1
fi
if [ "$failed" -ne 0 ]; then
  if no_device_at_all; then
    echo "run_cli.sh: skipped: no OpenCL device on this machine"
    exit 77
  fi
  exit 1
fi
echo "run_cli.sh: exit code $code and output as expected"
exit 0
