#!/bin/sh
# hosts.sh MPIEXEC HGR: three ranks that MPI takes for three hosts. Ranks 1 and 2 run
# in UTS namespaces of their own with host names of their own (MPI_Get_processor_name
# is the host name), so `hgr place --place stages:3` must let them measure their
# devices in the same turn ("turn 1 of 1" on both) instead of one after another; the
# placed graph must be written. Exits 77 (skipped), saying why, where a UTS namespace
# cannot be made (not root, no `unshare`, a kernel or container that refuses it).
set -u
mpiexec="$1" hgr="$2"

if [ "$mpiexec" = --rank-on-host ]; then
  # hosts.sh --rank-on-host NAME PROGRAM ARGS...: run by mpirun inside the namespace
  hostname "$2" || exit 1
  shift 2
  exec "$@"
fi

skip() { echo "hosts.sh: skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "setting a host name in a UTS namespace needs root"
command -v unshare >/dev/null 2>&1 || skip "no 'unshare' program (util-linux)"
unshare --uts true 2>/dev/null || skip "cannot make a UTS namespace (unshare --uts failed)"

here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
out="${TMPDIR:-/tmp}/hosts.$$"
args="place examples/cnn.json --params examples/cnn.params --devices r0/pocl:0,r1/pocl:0,r2/pocl:0
      --place stages:3 -o $out.json"
# shellcheck disable=SC2086
"$mpiexec" --allow-run-as-root --oversubscribe \
  -np 1 "$hgr" $args : \
  -np 1 unshare --uts sh "$here/hosts.sh" --rank-on-host hgr-test-host-b "$hgr" $args : \
  -np 1 unshare --uts sh "$here/hosts.sh" --rank-on-host hgr-test-host-c "$hgr" $args >"$out.log" 2>&1
code=$?
cat "$out.log"
failed=0
if [ "$code" -ne 0 ]; then echo "hosts.sh: FAILED: mpirun exited with $code"; failed=1; fi
for rank in 1 2; do
  grep -q "rank $rank: measuring its devices in turn 1 of 1" "$out.log" ||
    { echo "hosts.sh: FAILED: rank $rank did not measure in the one turn"; failed=1; }
done
[ -s "$out.json" ] || { echo "hosts.sh: FAILED: no placed graph written"; failed=1; }
rm -f "$out.log" "$out.json"
[ "$failed" -eq 0 ] && echo "hosts.sh: ranks 1 and 2, on hosts of their own, measured in one turn"
exit "$failed"
