#!/bin/sh
# check_run_cli.sh RUN_CLI HGR
# Proves that the CLI tests can fail: runs run_cli.sh (RUN_CLI) on programs whose exit
# code or output is wrong and requires it to exit 1 naming the reason, and on right
# ones and requires 0. A fake program covers each case without a device; the real hgr
# program (HGR) covers cli_memory_budget's case with a wrong EXIT. Exits 1 on the
# first case that goes the wrong way.
set -u
run_cli="$1"
hgr="$2"
log="${TMPDIR:-/tmp}/check_run_cli.$$"
trap 'rm -f "$log"' EXIT
cases=0

# expect WANT_EXIT WANT_TEXT EXPECTED_EXIT PATTERN PROGRAM ARGS...
expect() {
  want="$1" want_text="$2"
  shift 2
  cases=$((cases + 1))
  sh "$run_cli" "$@" >"$log" 2>&1
  got=$?
  if [ "$got" -ne "$want" ] || ! grep -q -e "$want_text" "$log"; then
    echo "check_run_cli.sh: case $cases: run_cli.sh $* exited $got (wanted $want, printing '$want_text'):"
    cat "$log"
    exit 1
  fi
  echo "case $cases: run_cli.sh expecting exit $1 and /$2/ -> exit $got, as it should"
}

budget="more than the memory budget of 1048576 bytes per device"

# A program that prints the expected text and exits 1.
fake='printf "line one\n%s\nlast line\n" "$0"; exit "$1"'
expect 0 "exit code 1 and output as expected" 1 "memory budget" sh -c "$fake" "$budget" 1
expect 1 "FAILED: exit code 1, expected 0" 0 "memory budget" sh -c "$fake" "$budget" 1
expect 1 "FAILED: exit code 1, expected 2" 2 "memory budget" sh -c "$fake" "$budget" 1
expect 1 "FAILED: exit code 0, expected 1" 1 "memory budget" sh -c "$fake" "$budget" 0
expect 1 "FAILED: the output does not match" 1 "no such text" sh -c "$fake" "$budget" 1
expect 1 "FAILED: the output does not match" 0 "no such text" sh -c "$fake" "$budget" 0
# `.` spans lines, as in CMake's regexes; a pattern out of order does not match.
expect 0 "exit code 0 and output as expected" 0 "line one.*memory budget.*last line" sh -c "$fake" "$budget" 0
expect 1 "FAILED: the output does not match" 0 "last line.*line one" sh -c "$fake" "$budget" 0
# A pattern that starts with dashes is a pattern, not an option.
expect 0 "output as expected" 0 "--pipeline takes" sh -c 'echo "--pipeline takes a number"'
# The real program: cli_memory_budget's command with the right and two wrong exit codes.
# It needs a device: on a machine with none (a cross build under qemu-user) the cases
# above have passed and the rest is skipped (77).
if "$hgr" check examples/large.json --memory-budget 1M 2>&1 | grep -q "no OpenCL device found"; then
  echo "check_run_cli.sh: $cases cases as expected; the real program's skipped: no OpenCL device on this machine"
  exit 77
fi
expect 0 "exit code 1 and output as expected" 1 "$budget" "$hgr" check examples/large.json --memory-budget 1M
expect 1 "FAILED: exit code 1, expected 0" 0 "$budget" "$hgr" check examples/large.json --memory-budget 1M
expect 1 "FAILED: exit code 1, expected 2" 2 "$budget" "$hgr" check examples/large.json --memory-budget 1M
echo "check_run_cli.sh: all $cases cases as expected"
