#!/usr/bin/env bash
# rx-keeps-up.sh TOOL [RUNS] - does `faststamp rx --write` keep up with a burst?
#
# Issue 18's experiment, by hand (root): two network namespaces joined by a veth pair
# (made here, removed at exit; traffic goes only to 10.78.0.2 inside them), rx with
# default options writing a pcap, then `tx --rate 200000 --count 20000` from the other
# namespace, on the same machine. Each run prints rx's stats line and the records that
# tcpdump reads back; the last line says how many runs captured all of them.
# Environment: FTS_RATE (200000), FTS_COUNT (20000), FTS_SIZE (64), FTS_RX_OPTS (none).
# A bench, not a test: how it comes out depends on what else the machine runs.
set -uo pipefail
tool=$(realpath "$1") runs=${2:-5}
rate=${FTS_RATE:-200000} count=${FTS_COUNT:-20000} size=${FTS_SIZE:-64}
[ "$(id -u)" -eq 0 ] || { echo "rx-keeps-up: needs root (network namespaces)"; exit 77; }
command -v tcpdump >/dev/null || { echo "rx-keeps-up: needs tcpdump"; exit 77; }
work=$(mktemp -d /tmp/fts-keepsup.XXXXXX)
ns_a=fts-ku-a-$$ ns_b=fts-ku-b-$$ port=$(( 20000 + $$ % 40000 ))
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns_a" && ip netns add "$ns_b" || exit 1
ip link add fka$$ netns "$ns_a" type veth peer name fkb$$ netns "$ns_b" || exit 1
ip -n "$ns_a" link set lo up; ip -n "$ns_b" link set lo up
ip -n "$ns_a" addr add 10.78.0.1/24 dev fka$$
ip -n "$ns_b" addr add 10.78.0.2/24 dev fkb$$
ip -n "$ns_a" link set fka$$ up; ip -n "$ns_b" link set fkb$$ up
for _ in $(seq 100); do
  ip -n "$ns_a" link show fka$$ | grep -q LOWER_UP && ip -n "$ns_b" link show fkb$$ | grep -q LOWER_UP && break
  sleep 0.05
done
ok=0
for r in $(seq "$runs"); do
  rm -f "$work/c.pcap"
  # shellcheck disable=SC2086
  ip netns exec "$ns_b" "$tool" rx --listen 10.78.0.2:$port --count "$count" --duration 20 \
    --write "$work/c.pcap" ${FTS_RX_OPTS:-} 2> "$work/rx.err" & pid=$!
  for _ in $(seq 100); do
    ip netns exec "$ns_b" ss -Huln "sport = :$port" | grep -q . && break
    sleep 0.05
  done
  ip netns exec "$ns_a" "$tool" tx --to 10.78.0.2:$port --count "$count" --rate "$rate" \
    --size "$size" > "$work/tx.out" || { echo "tx failed: $(cat "$work/tx.out")"; exit 1; }
  # rx stops at --count; when datagrams were lost it stops at --duration, or now.
  sleep 1; kill -INT $pid 2>/dev/null; wait $pid
  recs=$(tcpdump -r "$work/c.pcap" 2>/dev/null | wc -l)
  loss=$(( count - recs ))
  [ "$loss" -eq 0 ] && ok=$((ok + 1))
  printf 'run %d: captured %d of %d, lost %d (%.1f%%); %s; tx: %s\n' "$r" "$recs" "$count" "$loss" \
    "$(echo "100 * $loss / $count" | bc -l)" "$(grep "^rx: " "$work/rx.err" | tr "\n" " ")" "$(tail -1 "$work/tx.out")"
done
echo "rx-keeps-up: $ok of $runs runs captured all $count datagrams ($rate packets/s, $size bytes)"
[ "$ok" -eq "$runs" ]
