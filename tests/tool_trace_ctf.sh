#!/usr/bin/env bash
# tool_trace_ctf.sh FASTSTAMP TRACELOG - `faststamp trace --format ctf`: babeltrace2
# reads the CTF trace and prints every event of `faststamp trace`'s text, with the same
# timestamp to the ns, thread, name, kind and fields, on every clock.
set -uo pipefail
tool=$1 tracelog=$2
work=$(mktemp -d /tmp/fts-trace-ctf.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# With the generic backend stamps are CLOCK_REALTIME readings: they convert to it alone,
# and the trace holds no samples.
clocks="realtime tai monotonic boottime raw"
generic=
"$tool" info | grep -q '^backend: *generic' && { clocks=realtime; generic=1; }
command -v babeltrace2 > /dev/null || { echo "SKIP: no babeltrace2 (scripts/deps.sh installs it)"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }

"$tracelog" "$work/t.fts" 300 > "$work/log" || fail "tracelog exited $?: $(cat "$work/log")"
for clock in $clocks; do
  "$tool" trace "$work/t.fts" --clock $clock > "$work/$clock.txt" 2> "$work/err" ||
    fail "trace --clock $clock exited $?: $(cat "$work/err")"
  "$tool" trace "$work/t.fts" --clock $clock --format ctf --out "$work/ctf-$clock" 2> "$work/err" ||
    fail "trace --format ctf exited $?: $(cat "$work/err")"
  babeltrace2 --clock-seconds "$work/ctf-$clock" > "$work/$clock.bt" 2> "$work/err" ||
    fail "babeltrace2 exited $?: $(cat "$work/err")"
  python3 - "$work/$clock.txt" "$work/$clock.bt" << 'PY' || fail "$clock: babeltrace2 and faststamp trace differ"
import re, sys
from collections import Counter
def ns(s):
    sec, frac = s.split('.')
    return int(sec) * 10**9 + int(frac)
text = Counter()
for line in open(sys.argv[1]):
    w = line.split()
    text[(ns(w[0]), int(w[1][2:]), int(w[2]), w[3], w[4], tuple(w[5:]))] += 1
bt = Counter()
pat = re.compile(r'^\[(\d+\.\d{9})\] \(\S+\) .*?(\S+): \{ tid = (\d+), kind = \( "(\w+)" : container = \d \), '
                 r'bound_ns = (\d+) \}(?:, \{ (.*) \})?$')
for line in open(sys.argv[2]):
    m = pat.match(line.rstrip('\n'))
    if not m:
        print("unparsed:", line)
        sys.exit(1)
    fields = tuple(f.replace(' = ', '=') for f in m.group(6).split(', ')) if m.group(6) else ()
    bt[(ns(m.group(1)), int(m.group(5)), int(m.group(3)), m.group(2), m.group(4), fields)] += 1
if bt != text or sum(text.values()) != 3000:
    print("events: text", sum(text.values()), "babeltrace2", sum(bt.values()))
    print("only in text:", list((text - bt).items())[:3])
    print("only in babeltrace2:", list((bt - text).items())[:3])
    sys.exit(1)
PY
done
# one rule with the text: a field not given is absent, not 0 (trace-unpaired.fts: an
# instant of request, whose type has id, given none)
"$tool" trace "$(dirname "$0")/data/trace-unpaired.fts" --format ctf --out "$work/ctf-unpaired" 2> "$work/err" ||
  fail "ctf of trace-unpaired.fts: $(cat "$work/err")"
babeltrace2 "$work/ctf-unpaired" > "$work/unpaired.bt" 2> "$work/err" || fail "babeltrace2: $(cat "$work/err")"
[ "$(sed -n 's/.*request: { tid = [0-9]*, kind = ( "\([a-z]*\)".*bound_ns = [0-9]* }\(.*\)$/\1\2/p' "$work/unpaired.bt" | tr '\n' ';')" = \
  "end, { id = 7 };instant, { };begin, { id = 8 };end, { id = 8 };begin, { id = 9 };" ] ||
  fail "ctf fields not as the text's: $(cat "$work/unpaired.bt")"
# the directory must be new: nothing is written over
"$tool" trace "$work/t.fts" --format ctf --out "$work/ctf-realtime" > /dev/null 2> "$work/err" &&
  fail "ctf into an existing directory"
grep -q 'exists (--force' "$work/err" || fail "existing directory: $(cat "$work/err")"
# --force: a directory of a CTF trace alone is emptied and written; one with other files,
# or a file, is left alone
"$tool" trace "$work/t.fts" --format ctf --out "$work/ctf-realtime" --force 2> "$work/err" ||
  fail "ctf --force: $(cat "$work/err")"
[ -f "$work/ctf-realtime/metadata" ] || fail "ctf --force: no metadata"
echo mine > "$work/ctf-realtime/notes"
"$tool" trace "$work/t.fts" --format ctf --out "$work/ctf-realtime" --force > /dev/null 2> "$work/err" &&
  fail "ctf --force into a directory of other files"
[ -f "$work/ctf-realtime/notes" ] && [ -f "$work/ctf-realtime/metadata" ] || fail "ctf --force removed files"
"$tool" trace "$work/t.fts" --format ctf --out "$work/t.fts" --force > /dev/null 2> "$work/err" &&
  fail "ctf --out the trace itself"
grep -q 'the trace itself' "$work/err" || fail "ctf --out the trace: $(cat "$work/err")"
"$tool" trace "$work/t.fts" --format ctf > /dev/null 2> "$work/err"; [ $? -eq 2 ] || fail "ctf without --out"
echo "ok: 3000 events on $clocks, babeltrace2 agrees to the ns"
