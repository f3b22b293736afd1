#!/bin/sh
# run_cli.sh EXPECTED_EXIT PROGRAM ARGS...
# Runs the hgr program, shows its output (for PASS_REGULAR_EXPRESSION), and fails
# unless it exits with EXPECTED_EXIT. A run that was meant to succeed but found no
# device for a --device spec is reported as skipped (77): the platform is absent.
expected="$1"; shift
output="$("$@" 2>&1)"
code=$?
printf '%s\n' "$output"
if [ "$code" -ne "$expected" ]; then
  if [ "$expected" -eq 0 ] && printf '%s' "$output" | grep -q "no device matches"; then
    echo "skipped: a device this test binds is absent"
    exit 77
  fi
  echo "exit code $code, expected $expected"
  exit 1
fi
exit 0
