#!/bin/sh
# check_fifo_input.sh RUN_CLI TMP_DIR NAME FILE PATTERN HGR ARGS...
# Gives hgr input NAME through a FIFO (TMP_DIR/<pid>-NAME.<FILE's extension>) that a
# background writer fills with FILE once, then runs `HGR ARGS... --input NAME=FIFO`
# through run_cli.sh, expecting exit 0 and PATTERN. hgr must read the FIFO once: a
# second open would wait for a writer that never comes, so the run is limited to
# 120 s and the writer must have finished when hgr did.
run_cli="$1"
tmp="$2"
name="$3"
file="$4"
pattern="$5"
shift 5
fifo="$tmp/$$-$name.${file##*.}"
rm -f "$fifo"
mkfifo "$fifo" || exit 1
cat "$file" >"$fifo" &
writer=$!
timeout 120 sh "$run_cli" 0 "$pattern" "$@" --input "$name=$fifo"
code=$?
if kill -0 "$writer" 2>/dev/null; then
  echo "check_fifo_input.sh: FAILED: hgr finished without reading the FIFO"
  kill "$writer"
  code=1
fi
wait "$writer"
rm -f "$fifo"
[ "$code" -eq 124 ] && echo "check_fifo_input.sh: FAILED: hgr still waited on the FIFO after 120 s"
exit "$code"
