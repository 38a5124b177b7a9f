#!/usr/bin/env bash
# packet_test.sh TOOL CASE - one end-to-end case of faststamp rx/tx, run by CTest.
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
# Sends only to loopback or to addresses inside network namespaces made here.
set -uo pipefail
tool=$1 case=$2
work=$(mktemp -d /tmp/fts-packet.XXXXXX)
ns_a="" ns_b="" mnt=""
cleanup() {
  [ -n "$mnt" ] && umount "$mnt" 2>/dev/null
  [ -n "$ns_a" ] && ip netns del "$ns_a" 2>/dev/null
  [ -n "$ns_b" ] && ip netns del "$ns_b" 2>/dev/null
  jobs -p | xargs -r kill 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL [$case]: $*"; exit 1; }
skip() { echo "SKIP [$case]: $*"; exit 77; }
need() { command -v "$1" >/dev/null || skip "$1 is not installed (scripts/deps.sh installs it)"; }
# A port unlikely to be taken, different for each case and run.
port=$(( 20000 + ($$ * 7 + ${#case} * 131) % 40000 ))

# in_ns NS CMD...: run CMD inside namespace NS, or here if NS is empty.
in_ns() { local ns=$1; shift; if [ -n "$ns" ]; then ip netns exec "$ns" "$@"; else "$@"; fi; }

# wait_bound NS PORT: until something listens on UDP PORT (in NS).
wait_bound() {
  for _ in $(seq 100); do
    in_ns "$1" ss -Huln "sport = :$2" 2>/dev/null | grep -q . && return 0
    sleep 0.05
  done
  fail "rx did not bind port $2"
}

# verify FILE N SRC DST DPORT SIZE T0 T1: what tshark and tcpdump read from FILE.
verify() {
  local f=$1 n=$2 src=$3 dst=$4 dport=$5 size=$6 t0=$7 t1=$8 ipf=ip
  case $dst in *:*) ipf=ipv6;; esac
  tshark -r "$f" -T fields -E separator=' ' -e frame.time_epoch -e $ipf.src -e $ipf.dst \
    -e udp.srcport -e udp.dstport -e udp.length -e udp.payload 2>"$work/tshark.err" > "$work/fields" \
    || fail "tshark -r $f failed: $(cat "$work/tshark.err")"
  local got; got=$(wc -l < "$work/fields")
  [ "$got" -eq "$n" ] || fail "tshark read $got frames from $f, expected $n"
  local udp; udp=$(tshark -r "$f" -Y udp 2>/dev/null | wc -l)
  [ "$udp" -eq "$n" ] || fail "tshark decoded $udp UDP frames, expected $n"
  local td; td=$(tcpdump -nn -r "$f" 2>/dev/null | grep -c " UDP, length $size$")
  [ "$td" -eq "$n" ] || fail "tcpdump -r read $td UDP frames of length $size, expected $n"
  # Addresses, ports, length, payload (the sequence number tx puts first, as 8
  # little-endian bytes in hex) per frame, and each time in nanosecond digits, never
  # backwards, inside the run. One awk for every frame; seconds and nanoseconds are
  # compared apart (a double cannot hold ns since 1970).
  local why
  why=$(awk -v src="$src" -v dst="$dst" -v dport="$dport" -v size="$size" \
            -v t0s="${t0:0:-9}" -v t0n="$((10#${t0: -9}))" -v t1s="${t1:0:-9}" -v t1n="$((10#${t1: -9}))" '
    function le_hex(n,   k, h) { h = ""; for (k = 0; k < 8; k++) { h = h sprintf("%02x", n % 256); n = int(n / 256) } return h }
    function bad(m) { print "frame " NR - 1 ": " m; exit 1 }
    function before(as, an, bs, bn) { return as < bs || (as == bs && an < bn) }
    { i = NR - 1
      if ($2 != src) bad("source " $2 ", expected " src)
      if ($3 != dst) bad("destination " $3 ", expected " dst)
      if ($5 != dport) bad("destination port " $5 ", expected " dport)
      if (sport == "") sport = $4
      if ($4 != sport || $4 + 0 <= 0) bad("source port " $4)
      if ($6 != size + 8) bad("UDP length " $6 ", expected " size + 8)
      if (size >= 8 && substr($7, 1, 16) != le_hex(i))
        bad("payload starts " substr($7, 1, 16) ", expected seq " i)
      if ($1 !~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]$/) bad("time " $1 " lacks nanosecond digits")
      split($1, t, "."); s = t[1] + 0; ns = t[2] + 0
      if (i > 0 && before(s, ns, ps, pns)) bad("time " $1 " goes backwards")
      if (before(s, ns, t0s + 0, t0n + 0) || before(t1s + 0, t1n + 0, s, ns))
        bad(sprintf("time %s outside the run [%d.%09d, %d.%09d]", $1, t0s, t0n, t1s, t1n))
      ps = s; pns = ns }' "$work/fields") || fail "$why"
}

# exchange NS_RX NS_TX LISTEN TO SRC DST FILE N SIZE [RX OPTIONS...]: rx writes, tx sends.
exchange() {
  local nsr=$1 nst=$2 listen=$3 to=$4 src=$5 dst=$6 f=$7 n=$8 size=$9
  shift 9
  local t0 t1
  t0=$(date +%s%N)
  in_ns "$nsr" "$tool" rx --listen "$listen" --count "$n" --write "$f" --duration 20 "$@" \
    2> "$work/rx.err" &
  local pid=$!
  wait_bound "$nsr" "$port"
  in_ns "$nst" "$tool" tx --to "$to" --count "$n" --rate 20000 --size "$size" > "$work/tx.out" \
    || fail "tx failed: $(cat "$work/tx.out")"
  wait $pid || fail "rx exited $?: $(cat "$work/rx.err")"
  t1=$(date +%s%N)
  grep -q "packets $n .*drops 0 " "$work/rx.err" || fail "rx stats: $(cat "$work/rx.err")"
  verify "$f" "$n" "$src" "$dst" "$port" "$size" "$t0" "$t1"
}

netns_up() {
  [ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
  ns_a=fts-a-$$ ns_b=fts-b-$$
  ip netns add "$ns_a" 2>/dev/null || { ns_a="" ns_b=""; skip "ip netns add failed (no netns support here)"; }
  ip netns add "$ns_b" || fail "ip netns add $ns_b"
  ip link add fva$$ netns "$ns_a" type veth peer name fvb$$ netns "$ns_b" || fail "veth"
  ip -n "$ns_a" link set lo up; ip -n "$ns_b" link set lo up
  ip -n "$ns_a" addr add 10.77.0.1/24 dev fva$$
  ip -n "$ns_b" addr add 10.77.0.2/24 dev fvb$$
  ip -n "$ns_a" addr add fd77::1/64 dev fva$$ nodad
  ip -n "$ns_b" addr add fd77::2/64 dev fvb$$ nodad
  ip -n "$ns_a" link set fva$$ up; ip -n "$ns_b" link set fvb$$ up
  for _ in $(seq 100); do
    ip -n "$ns_a" link show fva$$ | grep -q LOWER_UP && ip -n "$ns_b" link show fvb$$ | grep -q LOWER_UP && return 0
    sleep 0.05
  done
  fail "veth pair does not come up"
}

need tshark; need tcpdump; need ss
[ -x "$tool" ] || fail "no tool at $tool"
n=500

case $case in
  lo4-pcap)   exchange "" "" 127.0.0.1:$port 127.0.0.1:$port 127.0.0.1 127.0.0.1 "$work/a.pcap" $n 64;;
  lo4-pcapng) exchange "" "" 127.0.0.1:$port 127.0.0.1:$port 127.0.0.1 127.0.0.1 "$work/a.pcapng" $n 64;;
  lo6-pcap)   exchange "" "" "[::1]:$port" "[::1]:$port" ::1 ::1 "$work/a.pcap" $n 100;;
  lo6-pcapng) exchange "" "" "[::1]:$port" "[::1]:$port" ::1 ::1 "$work/a.pcapng" $n 100;;
  netns4)
    netns_up
    exchange "$ns_b" "$ns_a" 10.77.0.2:$port 10.77.0.2:$port 10.77.0.1 10.77.0.2 "$work/a.pcap" 2000 200
    exchange "$ns_b" "$ns_a" 0.0.0.0:$port 10.77.0.2:$port 10.77.0.1 10.77.0.2 "$work/b.pcapng" 2000 200 --force;;
  netns6)
    netns_up
    exchange "$ns_b" "$ns_a" "[fd77::2]:$port" "[fd77::2]:$port" fd77::1 fd77::2 "$work/a.pcapng" 2000 200
    exchange "$ns_b" "$ns_a" "[::]:$port" "[fd77::2]:$port" fd77::1 fd77::2 "$work/b.pcap" 2000 200;;
  stamp-modes)
    for m in clock kernel; do
      exchange "" "" 127.0.0.1:$port 127.0.0.1:$port 127.0.0.1 127.0.0.1 "$work/$m.pcap" 200 32 --stamp $m
    done
    # --stamp none: records without times (0), still all there.
    "$tool" rx --listen 127.0.0.1:$port --count 50 --write "$work/none.pcap" --stamp none 2>"$work/rx.err" &
    pid=$!; wait_bound "" $port
    "$tool" tx --to 127.0.0.1:$port --count 50 >/dev/null; wait $pid || fail "rx --stamp none"
    [ "$(tshark -r "$work/none.pcap" -T fields -e frame.time_epoch 2>/dev/null | grep -c '^0\.000000000$')" -eq 50 ] \
      || fail "--stamp none should write zero times";;
  sizes)
    # Zero-length and the largest IPv4 datagram; the payload must survive whole.
    exchange "" "" 127.0.0.1:$port 127.0.0.1:$port 127.0.0.1 127.0.0.1 "$work/z.pcap" 20 0
    exchange "" "" 127.0.0.1:$port 127.0.0.1:$port 127.0.0.1 127.0.0.1 "$work/m.pcapng" 20 65507
    caplens=$(tshark -r "$work/m.pcapng" -T fields -e frame.cap_len -e frame.len 2>/dev/null | sort -u)
    [ "$caplens" = "$(printf '65535\t65535')" ] || fail "65507-byte datagrams recorded as '$caplens'"
    tshark -r "$work/m.pcapng" -o udp.check_checksum:TRUE -o ip.check_checksum:TRUE \
      -T fields -e ip.checksum.status -e udp.checksum.status 2>/dev/null | sort -u > "$work/cs"
    [ "$(cat "$work/cs")" = "$(printf '1\t1')" ] || fail "checksums not valid: $(cat "$work/cs")"
    # --snaplen: records cut, original length kept.
    exchange "" "" 127.0.0.1:$port 127.0.0.1:$port 127.0.0.1 127.0.0.1 "$work/s.pcap" 20 1000 --snaplen 100
    lens=$(tshark -r "$work/s.pcap" -T fields -e frame.cap_len -e frame.len 2>/dev/null | sort -u)
    [ "$lens" = "$(printf '100\t1028')" ] || fail "--snaplen 100 gave '$lens'";;
  bad-input)
    for a in 1.2.3:80 "[::1]80" ::1:80 127.0.0.1:99999 127.0.0.1: foo:1 "[::1]:" "" 127.0.0.1:-1; do
      "$tool" rx --listen "$a" --count 1 > /dev/null 2> "$work/err"; rc=$?
      [ $rc -eq 2 ] || fail "rx --listen '$a' exited $rc, expected 2"
      grep -q "bad address" "$work/err" || fail "no clear message for '$a': $(cat "$work/err")"
      "$tool" tx --to "$a" --count 1 > /dev/null 2>&1; rc=$?
      [ $rc -eq 2 ] || fail "tx --to '$a' exited $rc, expected 2"
    done
    for args in "--count 0" "--batch 0" "--batch 5000" "--stamp slow" "--snaplen 0" "--bogus" "--count"; do
      # shellcheck disable=SC2086
      "$tool" rx --listen 127.0.0.1:$port $args > /dev/null 2>&1; rc=$?
      [ $rc -eq 2 ] || fail "rx $args exited $rc, expected 2"
    done
    "$tool" tx --to 127.0.0.1:$port --size 65508 > /dev/null 2>&1; rc=$?
    [ $rc -eq 2 ] || fail "tx --size 65508 over IPv4 exited $rc, expected 2"
    "$tool" rx --listen 127.0.0.1:$port --both --write "$work/x.pcap" > /dev/null 2>&1; rc=$?
    [ $rc -eq 2 ] || fail "--both with classic pcap exited $rc, expected 2";;
  port-in-use)
    "$tool" rx --listen 127.0.0.1:$port --duration 5 --stats 2>/dev/null & pid=$!
    wait_bound "" $port
    "$tool" rx --listen 127.0.0.1:$port --count 1 --write "$work/x.pcap" 2> "$work/err"; rc=$?
    kill -INT $pid; wait $pid
    [ $rc -eq 1 ] || fail "second rx on a busy port exited $rc, expected 1"
    grep -q "in use" "$work/err" || fail "no clear message: $(cat "$work/err")"
    [ ! -e "$work/x.pcap" ] || fail "a file was created although the port was busy";;
  unwritable)
    "$tool" rx --listen 127.0.0.1:$port --count 1 --write /nonexistent-dir/x.pcap 2> "$work/err"; rc=$?
    [ $rc -eq 1 ] && grep -q "cannot write /nonexistent-dir/x.pcap" "$work/err" \
      || fail "unwritable path: exit $rc, $(cat "$work/err")"
    "$tool" rx --listen 127.0.0.1:$port --count 1 --write /dev/full --force 2> "$work/err"; rc=$?
    [ $rc -eq 1 ] && grep -q "No space left" "$work/err" || fail "/dev/full: exit $rc, $(cat "$work/err")"
    # An existing file is refused unless --force.
    echo keep > "$work/old.pcap"
    "$tool" rx --listen 127.0.0.1:$port --count 1 --write "$work/old.pcap" 2> "$work/err"; rc=$?
    [ $rc -eq 1 ] && grep -q -- "--force" "$work/err" || fail "existing file: exit $rc, $(cat "$work/err")"
    [ "$(cat "$work/old.pcap")" = keep ] || fail "existing file was changed"
    exchange "" "" 127.0.0.1:$port 127.0.0.1:$port 127.0.0.1 127.0.0.1 "$work/old.pcap" 10 64 --force;;
  full-disk)
    [ "$(id -u)" -eq 0 ] || skip "mounting a small tmpfs needs root"
    mkdir -p "$work/mnt"
    mount -t tmpfs -o size=256k tmpfs "$work/mnt" 2>/dev/null || skip "cannot mount tmpfs"
    mnt=$work/mnt
    # Paced (the disk fills on an idle flush) and a burst (it fills with the buffer full).
    for f in x.pcapng:--rate:20000 y.pcap:--batch:64; do
      IFS=: read -r f topt tval <<< "$f"
      "$tool" rx --listen 127.0.0.1:$port --count 2000 --write "$mnt/$f" --duration 20 2> "$work/err" & pid=$!
      wait_bound "" $port
      "$tool" tx --to 127.0.0.1:$port --count 2000 --size 1000 "$topt" "$tval" >/dev/null
      wait $pid; rc=$?
      [ $rc -eq 1 ] || fail "full disk: rx exited $rc, expected 1: $(cat "$work/err")"
      grep -q "No space left" "$work/err" || fail "full disk: no clear message: $(cat "$work/err")"
      got=$(tshark -r "$mnt/$f" 2>"$work/tshark.err" | wc -l)
      [ -s "$work/tshark.err" ] && grep -qiv "running as user" "$work/tshark.err" && \
        fail "file on the full disk is not readable: $(cat "$work/tshark.err")"
      [ "$got" -gt 0 ] && [ "$got" -lt 2000 ] || fail "full disk: $got records readable"
      td=$(tcpdump -r "$mnt/$f" 2>/dev/null | wc -l)
      [ "$td" -eq "$got" ] || fail "full disk: tcpdump reads $td records, tshark $got"
      # The count rx reports is what reached the file, not what it queued.
      wr=$(sed -nE 's/^rx: packets [0-9]+ bytes [0-9]+ written ([0-9]+) .*/\1/p' "$work/err")
      [ "$wr" = "$got" ] || fail "full disk ($f): rx says written ${wr:-?}, the file holds $got: $(cat "$work/err")"
      rm -f "$mnt/$f"
    done;;
  ring-burst)
    # A burst far larger than a 2-slot ring that drops when full: every datagram is
    # written or counted.
    "$tool" rx --listen 127.0.0.1:$port --ring 2 --full drop --write "$work/r.pcap" --duration 3 2> "$work/err" & pid=$!
    wait_bound "" $port
    "$tool" tx --to 127.0.0.1:$port --count 20000 > "$work/tx.out" || fail "tx"
    wait $pid || fail "rx exited $?: $(cat "$work/err")"
    read -r pk wr sd rd < <(sed -nE 's/.*packets ([0-9]+) bytes [0-9]+ written ([0-9]+) drops [0-9]+ \(socket ([0-9]+), ring ([0-9]+)\).*/\1 \2 \3 \4/p' "$work/err")
    [ -n "${rd:-}" ] || fail "no stats line: $(cat "$work/err")"
    recs=$(tcpdump -r "$work/r.pcap" 2>/dev/null | wc -l)
    [ "$recs" -eq "$wr" ] || fail "file holds $recs records, rx says it wrote $wr"
    [ $((wr + rd)) -eq "$pk" ] || fail "written $wr + ring drops $rd != received $pk"
    [ $((pk + sd)) -eq 20000 ] || fail "received $pk + socket drops $sd != 20000 sent"
    [ "$rd" -gt 0 ] || fail "a 2-slot ring took a 20000-datagram burst without overflowing";;
  ring-wait)
    # The same burst with the default --full wait: the receiver leaves what the ring
    # cannot take in the socket buffer, so nothing is dropped at the ring; the kernel
    # drops (and counts) only what its buffer cannot hold, and rx says that it waited.
    # Two slots drain slowly (the drain naps when idle): rx ends with all 20000, or,
    # when the kernel dropped some, once its buffer has long been drained.
    "$tool" rx --listen 127.0.0.1:$port --ring 2 --write "$work/r.pcap" --count 20000 --duration 15 2> "$work/err" & pid=$!
    wait_bound "" $port
    "$tool" tx --to 127.0.0.1:$port --count 20000 > "$work/tx.out" || fail "tx"
    wait $pid || fail "rx exited $?: $(cat "$work/err")"
    read -r pk wr sd rd < <(sed -nE 's/.*packets ([0-9]+) bytes [0-9]+ written ([0-9]+) drops [0-9]+ \(socket ([0-9]+), ring ([0-9]+)\).*/\1 \2 \3 \4/p' "$work/err")
    [ -n "${rd:-}" ] || fail "no stats line: $(cat "$work/err")"
    recs=$(tcpdump -r "$work/r.pcap" 2>/dev/null | wc -l)
    [ "$recs" -eq "$wr" ] || fail "file holds $recs records, rx says it wrote $wr"
    [ "$rd" -eq 0 ] && [ "$wr" -eq "$pk" ] || fail "--full wait dropped at the ring: $(cat "$work/err")"
    [ $((pk + sd)) -eq 20000 ] || fail "received $pk + socket drops $sd != 20000 sent"
    grep -qE '^rx: the ring was full [1-9][0-9]* times, [0-9.]+ ms in all' "$work/err" \
      || fail "a 2-slot ring took a 20000-datagram burst without waiting: $(cat "$work/err")";;
  signal-stdout)
    # SIGINT ends a run without --count; the file is complete. '-' writes to stdout.
    "$tool" rx --listen 127.0.0.1:$port --write "$work/s.pcapng" 2> "$work/err" & pid=$!
    wait_bound "" $port
    "$tool" tx --to 127.0.0.1:$port --count 30 >/dev/null
    sleep 0.3; kill -INT $pid; wait $pid || fail "rx after SIGINT exited $?"
    [ "$(tshark -r "$work/s.pcapng" 2>/dev/null | wc -l)" -eq 30 ] || fail "SIGINT: not 30 records"
    "$tool" rx --listen 127.0.0.1:$port --count 30 --write - > "$work/o.pcap" 2> "$work/err" & pid=$!
    wait_bound "" $port
    "$tool" tx --to 127.0.0.1:$port --count 30 >/dev/null
    wait $pid || fail "rx --write - exited $?"
    [ "$(tcpdump -r - < "$work/o.pcap" 2>/dev/null | wc -l)" -eq 30 ] || fail "stdout: not 30 records"
    # SIGTERM too, with --stats and nothing to write: no stamps, counts only.
    "$tool" rx --listen 127.0.0.1:$port --stats 2> "$work/err" & pid=$!
    wait_bound "" $port
    "$tool" tx --to 127.0.0.1:$port --count 40 >/dev/null
    sleep 1.3; kill -TERM $pid; wait $pid || fail "rx --stats after SIGTERM exited $?"
    tail -n 1 "$work/err" | grep -q "packets 40 bytes 2560 written 0 drops 0" || fail "stats: $(cat "$work/err")"
    grep -c "packets/s" "$work/err" | grep -qv '^1$' || fail "no per-second stats: $(cat "$work/err")";;
  both)
    exchange "" "" 127.0.0.1:$port 127.0.0.1:$port 127.0.0.1 127.0.0.1 "$work/b.pcapng" 100 64 --both
    c=$(tshark -r "$work/b.pcapng" -T fields -e frame.comment 2>/dev/null | grep -cE '^kernel_ns=[0-9]{19} fast_minus_kernel_ns=-?[0-9]+$')
    [ "$c" -eq 100 ] || fail "$c of 100 records carry the kernel stamp"
    # Printed lines (no --write) carry both too.
    "$tool" rx --listen 127.0.0.1:$port --count 5 --both > "$work/lines" 2>/dev/null & pid=$!
    wait_bound "" $port
    "$tool" tx --to 127.0.0.1:$port --count 5 >/dev/null; wait $pid
    [ "$(grep -cE '^[0-9]+\.[0-9]{9} 127\.0\.0\.1:[0-9]+ -> 127\.0\.0\.1:'$port' len 64 kernel [0-9]+\.[0-9]{9} fast-kernel [-+][0-9]+ ns$' "$work/lines")" -eq 5 ] \
      || fail "printed lines: $(cat "$work/lines")";;
  duration-empty)
    "$tool" rx --listen "[::1]:$port" --duration 0.3 --write "$work/e.pcapng" 2>"$work/err" || fail "exit $?"
    tshark -r "$work/e.pcapng" >/dev/null 2>&1 || fail "empty capture not readable"
    grep -q "packets 0 " "$work/err" || fail "stats: $(cat "$work/err")";;
  listen-port0)
    # Port 0: the kernel picks one, and rx says which at start.
    for l in 127.0.0.1 "[::1]"; do
      "$tool" rx --listen "$l:0" --count 5 --write "$work/p.pcap" --force --duration 20 2> "$work/err" & pid=$!
      p=""
      for _ in $(seq 100); do
        p=$(sed -nE 's/^faststamp rx: listening on .*:([0-9]+)$/\1/p' "$work/err")
        [ -n "$p" ] && break
        sleep 0.05
      done
      [ -n "$p" ] || fail "rx --listen $l:0 does not say which port it bound: $(cat "$work/err")"
      grep -qxF "faststamp rx: listening on $l:$p" "$work/err" && [ "$p" -gt 0 ] \
        || fail "rx --listen $l:0: $(cat "$work/err")"
      wait_bound "" "$p"
      "$tool" tx --to "$l:$p" --count 5 >/dev/null || fail "tx to the port rx named"
      wait $pid || fail "rx --listen $l:0 exited $?: $(cat "$work/err")"
      [ "$(tcpdump -r "$work/p.pcap" 2>/dev/null | wc -l)" -eq 5 ] || fail "$l:$p: not 5 records"
    done;;
  tx-dest)
    # Destinations Linux would quietly turn into something else are usage errors.
    for a in "127.0.0.1:0|port 0 is not a destination" "[::1]:0|port 0 is not a destination" \
             "0.0.0.0:$port|the unspecified address is not a destination" \
             "[::]:$port|the unspecified address is not a destination"; do
      "$tool" tx --to "${a%%|*}" --count 1 > "$work/out" 2> "$work/err"; rc=$?
      [ $rc -eq 2 ] || fail "tx --to '${a%%|*}' exited $rc, expected 2: $(cat "$work/out" "$work/err")"
      grep -qF "${a#*|}" "$work/err" || fail "tx --to '${a%%|*}': $(head -1 "$work/err")"
    done;;
  write-dir)
    # A directory is named as one, with or without --force, and left alone.
    mkdir "$work/d"
    for f in "" --force; do
      # shellcheck disable=SC2086
      "$tool" rx --listen 127.0.0.1:$port --count 1 --write "$work/d" $f 2> "$work/err"; rc=$?
      [ $rc -eq 1 ] || fail "--write DIR $f exited $rc, expected 1"
      grep -qF "cannot write $work/d: it is a directory" "$work/err" || fail "--write DIR $f: $(cat "$work/err")"
    done
    [ -d "$work/d" ] && [ -z "$(ls -A "$work/d")" ] || fail "the directory was changed";;
  addr-errors)
    # Every address error says what is wrong with the address, for rx and tx alike.
    while IFS='|' read -r a why; do
      for c in "rx --listen" "tx --to"; do
        # shellcheck disable=SC2086
        "$tool" $c "$a" --count 1 > /dev/null 2> "$work/err"; rc=$?
        [ $rc -eq 2 ] || fail "$c '$a' exited $rc, expected 2"
        grep -qF "bad address '$a': $why" "$work/err" || fail "$c '$a': $(head -1 "$work/err"); expected: $why"
      done
    done <<'TABLE'
|empty
127.0.0.1|no ':PORT'
1.2.3:80|'1.2.3' is not an IPv4 address
foo:1|'foo' is not an IPv4 address
:80|no address before the port
127.0.0.1:|no port after ':'
127.0.0.1:99999|port '99999' is not a number 0..65535
127.0.0.1:-1|port '-1' is not a number 0..65535
::1:80|an IPv6 address goes in brackets
[::1|no ']' after the IPv6 address
[::1]80|no ':PORT' after ']'
[::1]:|no port after ':'
[zz::1]:80|'zz::1' is not an IPv6 address
[fe80::1]:9000|link-local 'fe80::1' needs an interface
[fe80::1%nosuchif]:9000|unknown interface 'nosuchif'
[fe80::1%99999]:9000|no interface number '99999'
[fe80::1%]:9000|no interface after '%'
TABLE
    # A scope by name or number parses (exit 1, not 2: fe80::1 is not on lo) and is
    # printed back with the interface's name.
    for sc in lo "$(cat /sys/class/net/lo/ifindex)"; do
      "$tool" rx --listen "[fe80::1%$sc]:$port" --count 1 > /dev/null 2> "$work/err"; rc=$?
      [ $rc -eq 1 ] && grep -qF "cannot listen on [fe80::1%lo]:$port" "$work/err" \
        || fail "rx --listen [fe80::1%$sc]: exit $rc, $(cat "$work/err")"
    done;;
  netns6-scope)
    # Link-local addresses need the interface: by name on one side, number on the other.
    netns_up
    ip -n "$ns_a" addr add fe80::77:1/64 dev fva$$ nodad
    ip -n "$ns_b" addr add fe80::77:2/64 dev fvb$$ nodad
    ia=$(ip netns exec "$ns_a" cat /sys/class/net/fva$$/ifindex)
    ib=$(ip netns exec "$ns_b" cat /sys/class/net/fvb$$/ifindex)
    exchange "$ns_b" "$ns_a" "[fe80::77:2%fvb$$]:$port" "[fe80::77:2%$ia]:$port" fe80::77:1 fe80::77:2 "$work/a.pcapng" 200 100
    grep -qxF "faststamp rx: listening on [fe80::77:2%fvb$$]:$port" "$work/rx.err" || fail "$(cat "$work/rx.err")"
    exchange "$ns_b" "$ns_a" "[fe80::77:2%$ib]:$port" "[fe80::77:2%fva$$]:$port" fe80::77:1 fe80::77:2 "$work/b.pcap" 200 100;;
  rate-few)
    # Three datagrams come within microseconds: a rate over that means nothing.
    "$tool" rx --listen 127.0.0.1:$port --count 3 --write "$work/f.pcap" 2> "$work/err" & pid=$!
    wait_bound "" $port
    "$tool" tx --to 127.0.0.1:$port --count 3 > "$work/tx.out" || fail "tx: $(cat "$work/tx.out")"
    wait $pid || fail "rx exited $?: $(cat "$work/err")"
    grep -q "^rx: packets 3 .* n/a packets/s$" "$work/err" || fail "rx of 3 datagrams: $(cat "$work/err")"
    grep -qF "(n/a packets/s)" "$work/tx.out" || fail "tx of 3 datagrams: $(cat "$work/tx.out")"
    # Over 100 ms there is a rate, near the one sent (bounds, not a value: CI is a VM).
    "$tool" rx --listen 127.0.0.1:$port --count 200 --write "$work/g.pcap" --duration 20 2> "$work/err" & pid=$!
    wait_bound "" $port
    "$tool" tx --to 127.0.0.1:$port --count 200 --rate 2000 > "$work/tx.out" || fail "tx: $(cat "$work/tx.out")"
    wait $pid || fail "rx exited $?: $(cat "$work/err")"
    r=$(sed -nE 's/^rx: packets 200 .* ([0-9]+) packets\/s$/\1/p' "$work/err")
    [ -n "$r" ] && [ "$r" -ge 200 ] && [ "$r" -le 20000 ] || fail "rx rate at 2000/s: $(cat "$work/err")"
    r=$(sed -nE 's/.*\(([0-9]+) packets\/s\).*/\1/p' "$work/tx.out")
    [ -n "$r" ] && [ "$r" -ge 200 ] && [ "$r" -le 20000 ] || fail "tx rate at 2000/s: $(cat "$work/tx.out")"
    # --compare over 200 datagrams: microseconds per mode, no rate and no CPU per packet.
    "$tool" rx --compare --count 200 --chunk 100 --rounds 1 > "$work/cmp" 2>&1 || fail "--compare: $(cat "$work/cmp")"
    [ "$(grep -cE '^  (none|fast|clock|kernel) +n/a +n/a +n/a +n/a +[0-9]+$' "$work/cmp")" -eq 4 ] \
      || fail "--compare of 200 datagrams: $(cat "$work/cmp")";;
  repeated-options)
    # A second value would silently win over the first: a usage error naming the option.
    base="--listen 127.0.0.1:$port --duration 0.2 --write $work/r.pcap --force"
    for o in "--listen 127.0.0.1:$port" "--count 5" "--duration 0.2" "--write $work/r.pcap" \
             "--snaplen 100" "--batch 8" "--ring 64" "--full drop" "--rcvbuf 65536" "--stamp clock"; do
      # shellcheck disable=SC2086
      "$tool" rx $base $o $o > /dev/null 2> "$work/err"; rc=$?
      [ $rc -eq 2 ] && grep -q -- "^faststamp rx: ${o%% *} is given more than once" "$work/err" \
        || fail "rx: $o twice: exit $rc, $(head -1 "$work/err")"
    done
    for o in "--count 100" "--chunk 50" "--size 32" "--rounds 1"; do
      # shellcheck disable=SC2086
      "$tool" rx --compare --count 100 --rounds 1 $o $o > /dev/null 2> "$work/err"; rc=$?
      [ $rc -eq 2 ] && grep -q -- "^faststamp rx: ${o%% *} is given more than once" "$work/err" \
        || fail "rx --compare: $o twice: exit $rc, $(head -1 "$work/err")"
    done
    for o in "--to 127.0.0.1:$port" "--count 1" "--rate 1000" "--size 10" "--batch 4"; do
      # shellcheck disable=SC2086
      "$tool" tx --to 127.0.0.1:$port --count 1 $o $o > /dev/null 2> "$work/err"; rc=$?
      [ $rc -eq 2 ] && grep -q -- "^faststamp tx: ${o%% *} is given more than once" "$work/err" \
        || fail "tx: $o twice: exit $rc, $(head -1 "$work/err")"
    done
    # A value missing at the end is named as such.
    "$tool" rx --listen 127.0.0.1:$port --count > /dev/null 2> "$work/err"; rc=$?
    [ $rc -eq 2 ] && grep -q -- "^faststamp rx: --count needs a value" "$work/err" || fail "rx --count: $(head -1 "$work/err")"
    "$tool" tx --to 127.0.0.1:$port --rate > /dev/null 2> "$work/err"; rc=$?
    [ $rc -eq 2 ] && grep -q -- "^faststamp tx: --rate needs a value" "$work/err" || fail "tx --rate: $(head -1 "$work/err")";;
  unused-options)
    # An option the run would ignore is a usage error naming it.
    for o in "--chunk 5|goes with --compare" "--size 32|goes with --compare" "--rounds 2|goes with --compare" \
             "--snaplen 100|goes with --write" "--force|goes with --write"; do
      a=${o%%|*}
      # shellcheck disable=SC2086
      "$tool" rx --listen 127.0.0.1:$port --duration 0.2 $a > /dev/null 2> "$work/err"; rc=$?
      [ $rc -eq 2 ] && grep -qF -- "faststamp rx: ${a%% *} ${o#*|}" "$work/err" \
        || fail "rx ${o%%|*}: exit $rc, $(head -1 "$work/err")"
    done
    for o in "--write $work/c.pcap" --stats "--stamp clock" "--duration 1" "--batch 8" "--ring 64" "--full drop" "--rcvbuf 65536"; do
      # shellcheck disable=SC2086
      "$tool" rx --compare --count 100 --rounds 1 $o > /dev/null 2> "$work/err"; rc=$?
      [ $rc -eq 2 ] && grep -qF -- "faststamp rx: ${o%% *} does not go with --compare" "$work/err" \
        || fail "rx --compare $o: exit $rc, $(head -1 "$work/err")"
    done;;
  help-man)
    # --help and the man page name the same options, and the code takes each of them.
    man=$(dirname "$0")/../../man/faststamp.1
    [ -r "$man" ] || skip "no man page at $man"
    for c in rx tx; do
      "$tool" $c --help | grep -oE -- '--[a-z]+' | grep -vx -- --help | sort -u > "$work/help"
      sed -n "/^\.SS $c\$/,/^\.S[SH] [a-z]*/p" "$man" | sed 's/\\-/-/g' | grep -oE -- '--[a-z]+' | sort -u > "$work/man"
      diff "$work/help" "$work/man" > "$work/diff" || fail "$c: --help (<) and man (>) differ: $(cat "$work/diff")"
      # A trailing unknown option ends each run at the parser, before any work.
      while read -r o; do
        "$tool" $c "$o" --zz-end > /dev/null 2> "$work/err"
        ! grep -qF "option '$o'" "$work/err" || fail "$c --help names $o, which $c does not take"
      done < "$work/help"
    done;;
  bench-veth)
    # Not a test: how fast rx keeps up over the veth pair. Prints, asserts nothing.
    netns_up
    rate=${FTS_BENCH_RATE:-200000} count=${FTS_BENCH_COUNT:-1000000}
    ip netns exec "$ns_b" "$tool" rx --listen 10.77.0.2:$port --count $count --duration 30 \
      --write "$work/bench.pcap" --snaplen 128 ${FTS_BENCH_RX_OPTS:-} & pid=$!
    wait_bound "$ns_b" $port
    ip netns exec "$ns_a" "$tool" tx --to 10.77.0.2:$port --count $count --rate $rate --size 64
    wait $pid;;
  *) fail "unknown case";;
esac
echo "PASS [$case]"
