#!/usr/bin/env bash
# example_test.sh STAMPLOG FASTSTAMP [generic] - the deferred-conversion pattern end to end, as
# two separate processes: examples/stamplog stores stamps in a log and records the
# clock; `faststamp convert` turns the log into times. Every time must lie within its
# bound of the clock_gettime bracket stamplog wrote beside the stamp. Also its errors:
# a malformed line names its number and the rest still convert (exit 1). With
# "generic" (run under FASTSTAMP_BACKEND=generic): recording is refused (ENOTSUP) and no
# file is created.
set -uo pipefail
stamplog=$1 tool=$2
work=$(mktemp -d /tmp/fts-example.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

if "$tool" info | grep -q '^backend: *generic$'; then
  # No counter: stamps are clock readings, there is nothing to record (ENOTSUP, no file).
  "$stamplog" "$work/events.bin" "$work/clock.fth" 10 2> "$work/err" && fail "stamplog recorded without a counter"
  grep -q 'Operation not supported' "$work/err" || fail "no counter: $(cat "$work/err")"
  [ ! -e "$work/clock.fth" ] || fail "no counter, yet a history file was created"
  if [ "${3:-}" = generic ]; then
    echo "generic backend: fts_clock_record refused (ENOTSUP), no file created"
    exit 0
  fi
  echo "SKIP: no counter in use (generic backend): stamps are clock readings, with no history to record"
  exit 77
fi
[ "${3:-}" != generic ] || fail "FASTSTAMP_BACKEND=generic, yet info shows another backend"
"$stamplog" "$work/events.bin" "$work/clock.fth" 20000 "$work/brackets" || fail "stamplog exited $?"
[ "$(stat -c %s "$work/events.bin")" -eq 160000 ] || fail "the log holds $(stat -c %s "$work/events.bin") bytes, not 160000"
"$tool" history "$work/clock.fth" > "$work/summary" || fail "faststamp history failed"
grep -q '^kind: *record' "$work/summary" || fail "history: $(cat "$work/summary")"
grep -q '(this boot)' "$work/summary" || fail "history does not see this boot: $(cat "$work/summary")"
"$tool" convert --history "$work/clock.fth" --in "$work/events.bin" --binary --format ns --bound \
  > "$work/times" || fail "faststamp convert exited $?"
[ "$(wc -l < "$work/times")" -eq 20000 ] || fail "$(wc -l < "$work/times") times, not 20000"
# Every stamp was stored while recording: the record holds it (it stops with a sample).
! grep -q extrapolated "$work/times" ||
  fail "$(grep -c extrapolated "$work/times") stamps stored while recording lie outside the record"
# Exact integers (python3): ns since 1970 do not fit a double (awk's) to the ns.
paste -d ' ' "$work/times" "$work/brackets" | python3 -c '
import sys
n = bad = close1us = total = 0
for line in sys.stdin:
    ns, err, t0, t1 = (int(v) for v in line.split()[:4])
    n += 1
    if ns + err < t0 or ns - err > t1:
        bad += 1
        if bad <= 3:
            print("outside:", line.strip())
    d = t0 - ns if ns < t0 else ns - t1 if ns > t1 else 0
    close1us += d <= 1000
    total += err
print("%d stamps converted in another process: %d outside their bound, %.2f%% within 1 us "
      "of the bracket, mean bound %.0f ns" % (n, bad, 100 * close1us / n, total / n))
sys.exit(bad > 0)' || fail "some times lie outside their bound"
# Every clock: the record holds each; MONOTONIC and MONOTONIC_RAW never step back, so
# conversions of the stamps (stored in increasing order) never decrease.
grep -q '^clocks: *CLOCK_REALTIME, CLOCK_TAI, CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_MONOTONIC_RAW$' \
  "$work/summary" || fail "history does not list every clock: $(cat "$work/summary")"
for clock in tai monotonic boottime raw; do
  "$tool" convert --history "$work/clock.fth" --in "$work/events.bin" --binary --clock $clock \
    --bound > "$work/times-$clock" || fail "convert --clock $clock exited $?"
  [ "$(wc -l < "$work/times-$clock")" -eq 20000 ] || fail "--clock $clock: $(wc -l < "$work/times-$clock") times"
done
for clock in monotonic raw; do
  awk 'NR > 1 && $1 < last { print "back at " NR ": " last " then " $1; exit 1 } { last = $1 }' \
    "$work/times-$clock" || fail "--clock $clock went back"
done
# The same stamps as text, one per line; iso and timespec formats.
od -An -v -t u8 -w8 "$work/events.bin" | head -n 3 | tr -d ' ' > "$work/lines"
printf 'bogus\n0x%x\n' "$(head -n 1 "$work/lines")" >> "$work/lines"
"$tool" convert --history "$work/clock.fth" --in "$work/lines" --format iso > "$work/iso" 2> "$work/err"
rc=$?
[ $rc -eq 1 ] || fail "a malformed line: exit $rc, not 1"
grep -q 'line 4:' "$work/err" || fail "the malformed line is not named: $(cat "$work/err")"
[ "$(wc -l < "$work/iso")" -eq 4 ] || fail "the other lines did not all convert: $(cat "$work/iso")"
grep -qE '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}Z$' "$work/iso" || fail "iso: $(head -n 1 "$work/iso")"
[ "$(sed -n 1p "$work/iso")" = "$(sed -n 4p "$work/iso")" ] || fail "decimal and hex of one stamp differ"
# Not a history file: refused, said so.
"$tool" convert --history "$work/events.bin" < /dev/null 2> "$work/err"
[ $? -eq 1 ] && grep -q 'not a history file' "$work/err" || fail "a log taken for a history: $(cat "$work/err")"
echo "example ok"
