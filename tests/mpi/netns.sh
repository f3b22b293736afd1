#!/bin/sh
# netns.sh MPIEXEC HGR: two ranks in two network namespaces that this test makes,
# joined by a veth pair with addresses of the loopback range (127.77.N.1 and .2, with
# route_localnet), so that every byte between the ranks crosses a real network stack:
# MPI's TCP transport only (no shared memory), and mpirun's PMIx connection forwarded
# over the same veth (forward.py). Runs the CNN placed in two stages with pipelined
# runs, checks its output on rank 0, and that the veth carried at least the copies'
# bytes. Exits 77 (skipped), saying why, when namespaces cannot be made (not root, no
# `ip`, a kernel or container that refuses them); removes what it made.
set -u
mpiexec="$1" hgr="$2"
here="$(cd "$(dirname "$0")" && pwd)"

if [ "$mpiexec" = --rank-in-ns ]; then
  # netns.sh --rank-in-ns NS ADDRESS PROGRAM ARGS...: run by mpirun for rank 1
  ns="$2" address="$3"; shift 3
  port=$(env | sed -n 's/^PMIX_SERVER_URI[0-9]*=.*tcp4:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' | head -1)
  [ -n "$port" ] || { echo "netns.sh: no PMIx server URI in the environment" >&2; exit 1; }
  # (their output not on mpirun's pipes, which mpirun waits on until they close)
  python3 "$here/forward.py" "$address.1" "$port" 127.0.0.1 </dev/null >/dev/null 2>&1 &
  ip netns exec "$ns" python3 "$here/forward.py" 127.0.0.1 "$port" "$address.1" </dev/null >/dev/null 2>&1 &
  sleep 0.5
  exec ip netns exec "$ns" "$@"
fi

skip() { echo "netns.sh: skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "making network namespaces needs root"
command -v ip >/dev/null 2>&1 || skip "no 'ip' program (iproute2)"
tag="h$$"
ns0="${tag}a" ns1="${tag}b" net="127.77.$(( $$ % 250 ))"
cleanup() {
  pkill -f "forward.py.*$net" 2>/dev/null
  ip netns del "$ns0" 2>/dev/null
  ip netns del "$ns1" 2>/dev/null
}
trap cleanup EXIT
ip netns add "$ns0" 2>/dev/null || skip "cannot make a network namespace (ip netns add failed)"
ip netns add "$ns1" && ip link add "${tag}x" type veth peer name "${tag}y" ||
  skip "cannot make a veth pair between two namespaces"
set -e
ip link set "${tag}x" netns "$ns0"
ip link set "${tag}y" netns "$ns1"
side() { # side NS VETH ADDRESS
  ip netns exec "$1" ip link set lo up
  ip netns exec "$1" sysctl -qw net.ipv4.conf.all.route_localnet=1 "net.ipv4.conf.$2.route_localnet=1"
  # 127.0.0.0/8 is all local to lo: keep 127.0.0.1 there, route the rest to the veth
  ip netns exec "$1" ip route del local 127.0.0.0/8 dev lo table local
  ip netns exec "$1" ip addr add "$3/24" dev "$2"
  ip netns exec "$1" ip link set "$2" up
}
side "$ns0" "${tag}x" "$net.1"
side "$ns1" "${tag}y" "$net.2"
set +e
received() { ip netns exec "$ns1" cat "/sys/class/net/${tag}y/statistics/rx_bytes"; }
before=$(received)

cd "$here/../.."
log="${TMPDIR:-/tmp}/netns.$$.log"
runs=20
args="${HGR_NETNS_ARGS:-run examples/cnn.json --params examples/cnn.params --input x=examples/cnn_x.npy
      --expect 0=examples/cnn_expected_0.npy --devices r0/pocl:0,r1/pocl:0 --place stages:2
      --repeat $runs --pipeline 2}"
# shellcheck disable=SC2086
ip netns exec "$ns0" "$mpiexec" --allow-run-as-root --oversubscribe --mca btl self,tcp \
  --mca btl_tcp_if_include "$net.0/24" --mca oob_tcp_if_include "$net.0/24" \
  -np 1 "$hgr" $args : -np 1 "$here/netns.sh" --rank-in-ns "$ns1" "$net" "$hgr" $args >"$log" 2>&1
code=$?
cat "$log"
crossed=$(( $(received) - before ))
if [ "$code" -ne 0 ]; then echo "netns.sh: FAILED: mpirun exited with $code"; exit 1; fi
grep -q "matches examples/cnn_expected_0.npy" "$log" || { echo "netns.sh: FAILED: no matching output"; exit 1; }
# each run moves the boundary tensor (8 KiB) to rank 1; rank 1 sends the output back
[ "$crossed" -ge $(( runs * 8192 )) ] || { echo "netns.sh: FAILED: only $crossed bytes crossed the veth"; exit 1; }
echo "netns.sh: $crossed bytes crossed the veth between the namespaces; output matches"
rm -f "$log"
