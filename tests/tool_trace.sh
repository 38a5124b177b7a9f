#!/usr/bin/env bash
# tool_trace.sh FASTSTAMP TRACELOG - `faststamp trace`: a trace written by
# examples/tracelog, read in another process on every clock; the JSON parses with
# Python's json, holds every event of the text, at the same ns (ts, and ts + dur for a
# span's end, from the origin in otherData), parsed as doubles too; a trace of the
# first layout prints as it did; usage errors; a path that exists is refused by the
# writer, and --out by the reader (the trace itself always, another file without
# --force); a damaged block is passed over and said, a damaged history prints
# counters; a directory, an empty file, a cut trace of no event; bench --trace-load
# counts every event it produced.
set -uo pipefail
tool=$1 tracelog=$2
work=$(mktemp -d /tmp/fts-trace.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# With the generic backend stamps are CLOCK_REALTIME readings: they convert to it alone,
# and the trace holds no samples.
clocks="realtime tai monotonic boottime raw"
generic=
"$tool" info | grep -q '^backend: *generic' && { clocks=realtime; generic=1; }

"$tracelog" "$work/t.fts" 500 > "$work/log" || fail "tracelog exited $?: $(cat "$work/log")"
grep -q '^5000 events, 0 dropped, 0 lost$' "$work/log" || fail "tracelog: $(cat "$work/log")"
# a trace is a record of the clock too: the history tools read it
[ -n "$generic" ] || "$tool" history "$work/t.fts" > /dev/null || fail "history of a trace exited $?"
# a path that exists: refused, untouched
echo keep > "$work/exists"
"$tracelog" "$work/exists" 1 > /dev/null 2> "$work/err" && fail "tracelog wrote over a file"
grep -q 'File exists' "$work/err" || fail "existing path: $(cat "$work/err")"
[ "$(cat "$work/exists")" = keep ] || fail "the existing file changed"

command -v python3 > /dev/null || { echo "SKIP: no python3 to parse the JSON"; exit 77; }
for clock in $clocks; do
  "$tool" trace "$work/t.fts" --clock $clock > "$work/$clock.txt" 2> "$work/err" ||
    fail "trace --clock $clock exited $?: $(cat "$work/err")"
  [ "$(wc -l < "$work/$clock.txt")" -eq 5000 ] || fail "$clock: $(wc -l < "$work/$clock.txt") lines"
  "$tool" trace "$work/t.fts" --clock $clock --format json --out "$work/$clock.json" 2> "$work/err" ||
    fail "trace --format json exited $?: $(cat "$work/err")"
  python3 - "$work/$clock.txt" "$work/$clock.json" << 'PY' || fail "$clock: the JSON and the text differ"
import json, sys
from collections import Counter
from decimal import Decimal
text = Counter()
for line in open(sys.argv[1]):
    w = line.split()
    sec, frac = w[0].split('.')
    ns = int(sec) * 10**9 + int(frac)
    args = tuple(sorted(x.split('=') for x in w[5:]))
    text[(w[3], w[4], int(w[2]), ns)] += 1
doc = json.load(open(sys.argv[2]), parse_float=Decimal)
origin = int(doc["otherData"]["origin_ns"])
assert origin == doc["otherData"]["origin_s"] * 10**9 and origin % 10**9 == 0, doc["otherData"]
ev = doc["traceEvents"]
# what a viewer reads: every number a double, and still every ns
flt = json.load(open(sys.argv[2]))["traceEvents"]
for e, f in zip(ev, flt):
    assert round(f["ts"] * 1000) == int(e["ts"] * 1000), (e, f)
    if "dur" in e:
        assert round((f["ts"] + f["dur"]) * 1000) == int((e["ts"] + e["dur"]) * 1000), (e, f)
js = Counter()
for e in ev:
    ts = origin + int(Decimal(e["ts"]) * 1000)
    assert Decimal(e["ts"]).as_tuple().exponent == -3, e
    kind = {"i": "instant", "X": "begin", "B": "begin", "E": "end"}[e["ph"]]
    js[(e["name"], kind, e["tid"], ts)] += 1
    if e["ph"] == "X":
        js[(e["name"], "end", e["tid"], ts + int(Decimal(e["dur"]) * 1000))] += 1
        assert e["args"]["id"] >= 0
    if e["name"] == "chunk":
        assert set(e["args"]) == {"id", "offset"}, e
    assert e["pid"] > 0
assert sum(1 for e in ev if e["ph"] == "X") == 1000, "spans"
if js != text:
    print("only in text:", list((text - js).items())[:5])
    print("only in json:", list((js - text).items())[:5])
    sys.exit(1)
PY
  # Perfetto's protobuf: every event at its ns (a whole uint64), on the clock named in
  # the snapshot, on its thread's track, its fields as annotations
  [ $clock = tai ] && continue
  "$tool" trace "$work/t.fts" --clock $clock --format perfetto --out "$work/$clock.pftrace" 2> "$work/err" ||
    fail "trace --format perfetto exited $?: $(cat "$work/err")"
  python3 - "$work/$clock.txt" "$work/$clock.pftrace" $clock << 'PY' || fail "$clock: the Perfetto trace and the text differ"
import sys
from collections import Counter
def fields(b):
    """A protobuf message's fields: {number: [value, ...]} (varints and byte strings)."""
    out, i = {}, 0
    def varint():
        nonlocal i
        v = s = 0
        while True:
            c = b[i]; i += 1
            v |= (c & 0x7f) << s; s += 7
            if not c & 0x80:
                return v
    while i < len(b):
        key = varint()
        if key & 7 == 0:
            val = varint()
        elif key & 7 == 2:
            n = varint(); val = b[i:i + n]; i += n
        else:
            raise ValueError("wire type %d" % (key & 7))
        out.setdefault(key >> 3, []).append(val)
    return out
ids = {"realtime": 1, "monotonic": 3, "raw": 5, "boottime": 6}
clock = ids[sys.argv[3]]
text = Counter()
for line in open(sys.argv[1]):
    w = line.split()
    sec, frac = w[0].split('.')
    text[(w[3], w[4], int(w[2]), int(sec) * 10**9 + int(frac), tuple(sorted(w[5:])))] += 1
packets = [fields(p) for p in fields(open(sys.argv[2], "rb").read())[1]]
snap = fields(packets[0][6][0])
assert fields(snap[1][0])[1] == [clock] and snap[2] == [clock], snap
threads, pf = {}, Counter()
for p in packets[1:]:
    assert p[10] == [1], p
    if 60 in p:
        d = fields(p[60][0])
        if 4 in d:
            threads[d[1][0]] = fields(d[4][0])[2][0]
        continue
    e = fields(p[11][0])
    assert p[58] == [clock], p
    args = tuple(sorted("%s=%d" % (fields(a)[10][0].decode(), fields(a)[3][0]) for a in e.get(4, [])))
    kind = {1: "begin", 2: "end", 3: "instant"}[e[9][0]]
    pf[(e[23][0].decode(), kind, threads[e[11][0]], p[8][0], args)] += 1
if pf != text:
    print("only in text:", list((text - pf).items())[:5])
    print("only in perfetto:", list((pf - text).items())[:5])
    sys.exit(1)
PY
done
"$tool" trace "$work/t.fts" --clock tai --format perfetto --out "$work/tai.pftrace" > /dev/null 2>&1
[ $? -eq 2 ] || fail "perfetto on TAI: not a usage error"
"$tool" trace "$work/t.fts" --format perfetto > /dev/null 2>&1; [ $? -eq 2 ] || fail "perfetto without --out"
# usage errors exit 2 and say why
"$tool" trace > /dev/null 2> "$work/err"; [ $? -eq 2 ] || fail "no file: not exit 2"
"$tool" trace "$work/t.fts" --clock utc > /dev/null 2> "$work/err"; [ $? -eq 2 ] || fail "--clock utc"
grep -q "unknown --clock 'utc'" "$work/err" || fail "--clock utc: $(cat "$work/err")"
"$tool" trace "$work/t.fts" --format xml > /dev/null 2> "$work/err"; [ $? -eq 2 ] || fail "--format xml"
# the error, the synopsis and where the rest is: not the whole usage
[ "$(head -1 "$work/err")" = "faststamp trace: unknown --format 'xml' (text, json, ctf or perfetto)" ] &&
  [ "$(sed -n 2p "$work/err")" = "usage: faststamp trace FILE [--clock realtime|tai|monotonic|boottime|raw]" ] &&
  [ "$(tail -1 "$work/err")" = "Try 'faststamp trace --help' for more." ] &&
  [ "$(wc -l < "$work/err")" -eq 4 ] || fail "--format xml: $(cat "$work/err")"
# not a trace, and a damaged one: exit 1 with the reason
"$tool" trace /etc/hostname > /dev/null 2> "$work/err"; [ $? -eq 1 ] || fail "not a trace: not exit 1"
"$tool" trace "$work/nothing" > /dev/null 2> "$work/err"; [ $? -eq 1 ] || fail "no file: not exit 1"
grep -q 'No such file' "$work/err" || fail "no file: $(cat "$work/err")"
"$tool" trace "$work" > /dev/null 2> "$work/err"; [ $? -eq 1 ] || fail "a directory: not exit 1"
grep -q 'is a directory' "$work/err" || fail "a directory: $(cat "$work/err")"
: > "$work/empty.fts"
"$tool" trace "$work/empty.fts" > /dev/null 2> "$work/err"; [ $? -eq 1 ] || fail "empty: not exit 1"
grep -q 'empty' "$work/err" || fail "empty: $(cat "$work/err")"
"$tool" trace /dev/stdin < "$work/t.fts" > /dev/null 2> "$work/err"
[ $? -eq 0 ] || fail "a trace on standard input (a file there): $(cat "$work/err")"
cat "$work/t.fts" | "$tool" trace /dev/stdin > /dev/null 2> "$work/err"; [ $? -eq 1 ] || fail "a pipe: not exit 1"
grep -q 'a pipe' "$work/err" || fail "a pipe: $(cat "$work/err")"
# --out: never the trace itself (by any name), an existing file only with --force
cp "$work/t.fts" "$work/keep.fts"; ln "$work/keep.fts" "$work/link.fts"
for f in json text; do
  for o in keep.fts link.fts; do
    "$tool" trace "$work/keep.fts" --format $f --out "$work/$o" --force > /dev/null 2> "$work/err"
    [ $? -eq 1 ] || fail "--out the trace itself ($f, $o): not exit 1"
    grep -q 'the trace itself' "$work/err" || fail "--out the trace itself: $(cat "$work/err")"
  done
  cmp -s "$work/t.fts" "$work/keep.fts" || fail "--out wrote over the trace ($f)"
  echo keep > "$work/o.$f"
  "$tool" trace "$work/t.fts" --format $f --out "$work/o.$f" 2> "$work/err"
  [ $? -eq 1 ] || fail "--out an existing file ($f): not exit 1"
  grep -q 'exists (--force' "$work/err" || fail "existing --out: $(cat "$work/err")"
  [ "$(cat "$work/o.$f")" = keep ] || fail "the existing --out changed ($f)"
  "$tool" trace "$work/t.fts" --format $f --out "$work/o.$f" --force 2> "$work/err" ||
    fail "--force ($f): $(cat "$work/err")"
  [ "$(cat "$work/o.$f")" != keep ] || fail "--force did not replace it ($f)"
done
"$tool" trace "$work/t.fts" --force > /dev/null 2>&1; [ $? -eq 2 ] || fail "--force without --out"
# a damaged block costs itself: the blocks before and after it are printed, the damage
# said with its offset, exit 1; a damaged header may have held the history: the
# events' counters, said so
python3 - "$work/t.fts" "$work" << 'PY' || fail "could not damage the trace"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
at, blocks = 16, []
while at + 24 <= len(b):
    typ, n = struct.unpack_from("<II", b, at + 4)
    blocks.append((at, typ, n))
    at += 24 + n + (8 - n % 8) % 8
ev = [x for x in blocks if x[1] == 0x80000015 and struct.unpack_from("<I", b, x[0] + 28)[0] > 0]
at, typ, n = ev[len(ev) // 2]
d = bytearray(b); d[at + 24 + n // 2] ^= 0x40          # inside an events block's payload
open(sys.argv[2] + "/mid.fts", "wb").write(d)
open(sys.argv[2] + "/mid.at", "w").write("%d %d %d\n" % (at, at + 24 + n + (8 - n % 8) % 8,
                                         struct.unpack_from("<I", b, at + 28)[0]))
d = bytearray(b); d[blocks[1][0] + 4] ^= 0x01             # the second block's header
open(sys.argv[2] + "/head.fts", "wb").write(d)
PY
read at end lost < "$work/mid.at"
"$tool" trace "$work/mid.fts" > "$work/mid.txt" 2> "$work/err"; [ $? -eq 1 ] || fail "damaged: not exit 1"
grep -q "a damaged block at byte $at, passed over: reading goes on at byte $end" "$work/err" ||
  fail "damaged: $(cat "$work/err")"
grep -q "1 damaged block passed over" "$work/err" || fail "damaged: $(cat "$work/err")"
[ "$(wc -l < "$work/mid.txt")" -eq $((5000 - lost)) ] || fail "damaged: $(wc -l < "$work/mid.txt") events"
# (an end whose begin lay in the lost block is printed unpaired: the same event)
sed -E 's/ end-unpaired( |$)/ end\1/' "$work/mid.txt" | grep -vxFf "$work/realtime.txt" > /dev/null &&
  fail "damaged: events not in the whole trace"
if [ -z "$generic" ]; then
  "$tool" trace "$work/head.fts" > "$work/head.txt" 2> "$work/err"; [ $? -eq 1 ] || fail "damaged header: not exit 1"
  grep -q "history was in a damaged block: 5000 events have no time" "$work/err" ||
    fail "damaged header: $(cat "$work/err")"
  [ "$(grep -c '^counter:0x[0-9a-f]* +-? ' "$work/head.txt")" -eq 5000 ] || fail "damaged header: $(head -3 "$work/head.txt")"
fi
# a trace cut before its first event and never stopped: said, exit 1
first=$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
at = 16
while struct.unpack_from("<I", b, at + 4)[0] != 0x80000015:
    n = struct.unpack_from("<I", b, at + 8)[0]
    at += 24 + n + (8 - n % 8) % 8
print(at + 30)' "$work/t.fts")
head -c $first "$work/t.fts" > "$work/early.fts"   # inside the first events block
"$tool" trace "$work/early.fts" > "$work/early.txt" 2> "$work/err"; [ $? -eq 1 ] || fail "no event, not stopped: not exit 1"
grep -q 'no event in it' "$work/err" || fail "no event, not stopped: $(cat "$work/err")"
# cut short (a killed writer): every whole block, and a note
size=$(stat -c %s "$work/t.fts")
head -c $((size * 2 / 3)) "$work/t.fts" > "$work/cut.fts"
"$tool" trace "$work/cut.fts" > "$work/cut.txt" 2> "$work/err" || fail "cut trace exited $?: $(cat "$work/err")"
grep -q 'not stopped' "$work/err" || fail "cut trace: $(cat "$work/err")"
n=$(wc -l < "$work/cut.txt")
[ "$n" -gt 0 ] && [ "$n" -lt 5000 ] || fail "cut trace: $n events"
# traces of the earlier layouts, written by those versions of the library (v1: 48-byte
# records in EVENTS blocks; v2: records as long as their fields, EVENTS_PACKED):
# printed byte for byte as those versions printed them
data=$(dirname "$0")/data
for v in v1 v2; do
  "$tool" trace "$data/trace-$v.fts" | cmp -s - "$data/trace-$v.txt" ||
    fail "trace-$v.fts: not the text of trace-$v.txt"
  "$tool" trace "$data/trace-$v.fts" --clock monotonic --format json |
    cmp -s - "$data/trace-$v-monotonic.json" || fail "trace-$v.fts: not the JSON of trace-$v-monotonic.json"
done
# fts_span_end with no begin (trace-unpaired.fts: an end alone, an instant of no field
# and one of its type's field not given, a span, a begin alone):
# written, and marked where it is read
"$tool" trace "$data/trace-unpaired.fts" > "$work/unpaired.txt" 2> "$work/err" ||
  fail "trace-unpaired.fts exited $?: $(cat "$work/err")"
[ "$(awk '{ print $4, $5, $6 }' "$work/unpaired.txt" | tr '\n' ';')" = \
  "request end-unpaired id=7;tick instant ;request instant ;request begin id=8;request end id=8;request begin id=9;" ] ||
  fail "unpaired end: $(cat "$work/unpaired.txt")"
"$tool" trace "$data/trace-unpaired.fts" --format json | python3 -c '
import json, sys
ev = json.load(sys.stdin)["traceEvents"]
got = [(e["ph"], e.get("cat"), e["args"].get("id")) for e in ev if e["name"] == "request"]
assert got == [("E", "unpaired", 7), ("i", None, None), ("X", None, 8), ("B", None, 9)], got' ||
  fail "unpaired end in the JSON"
# bench --trace-load: every event produced is written or dropped, none otherwise
# (whether the drain keeps up is the machine's: exit 0 or 1, said either way)
"$tool" bench --trace-load 200000 1 "$work" > "$work/load" 2>&1; rc=$?
[ $rc -le 1 ] || fail "bench --trace-load exited $rc: $(cat "$work/load")"
awk '/^  produced/ { p = $2 } /^  written/ { w = $2 } /^  dropped/ { d = $2 }
     /^  other errors/ { o = $3 } /^  lost/ { l = $2 }
     END { exit !(p == 200000 && w + d == p + 1 && o == 0 && w > 0) }' "$work/load" ||
  fail "bench --trace-load: $(cat "$work/load")"
grep -qE "^  (kept up|the drain did NOT keep up)" "$work/load" || fail "no verdict: $(cat "$work/load")"
[ -z "$(ls "$work" | grep faststamp-load)" ] || fail "the load's trace was left in $work"
"$tool" bench --trace-load 0 > /dev/null 2>&1; [ $? -eq 2 ] || fail "--trace-load 0: not exit 2"
"$tool" bench --trace-load 10 1 /nonexistent-dir > /dev/null 2> "$work/err"; [ $? -eq 1 ] ||
  fail "--trace-load into a missing directory: not exit 1"
grep -q "No such file" "$work/err" || fail "missing directory: $(cat "$work/err")"
echo "ok: 5000 events on $clocks, text and JSON agree to the ns"
