#!/usr/bin/env bash
# tool_convert_guess.sh FASTSTAMP MKHIST STAMPLOG - `faststamp convert` says what it
# guesses and refuses what it cannot know: a stamp outside the history is marked
# 'extrapolated' and counted on stderr; one beyond the history's reach (rule 15) is an
# error; a binary file read as text, text read as --binary and /dev/zero stop after a few
# errors with a hint, not after megabytes; --format iso prints what each clock means
# (UTC with Z, TAI without, the others as time since the boot).
set -uo pipefail
tool=$1 mkhist=$2 stamplog=$3
work=$(mktemp -d /tmp/fts-convert-guess.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Samples at counter B + 1e9, 2e9, 3e9 (1 GHz): the history spans 2 s, so it reaches 2 s
# before B + 1e9 and after B + 3e9.
B=1000000000000
"$mkhist" "$work/h" $B || fail "mkhist exited $?"
conv() { "$tool" convert --history "$work/h" "$@" > "$work/out" 2> "$work/err"; }

# Inside, 0.5 s before, 1 s after, 2 s after (the edge of reach): the three outside
# are marked and counted; exit 0.
printf '%s\n' $((B + 1500000000)) $((B + 500000000)) $((B + 4000000000)) $((B + 5000000000)) > "$work/in"
conv --in "$work/in" || fail "stamps within reach: exit $?: $(cat "$work/err")"
want="1700000001500000000
1700000000500000000 extrapolated
1700000004000000000 extrapolated
1700000005000000000 extrapolated"
[ "$(cat "$work/out")" = "$want" ] || fail "within reach printed: $(cat "$work/out")"
grep -q "^faststamp convert: 3 of 4 stamps converted lie outside the history .* extrapolated" "$work/err" ||
  fail "extrapolated stamps not counted: $(cat "$work/err")"
[ "$(wc -l < "$work/err")" -eq 1 ] || fail "stderr: $(cat "$work/err")"
# --bound keeps the bound in its column, the mark after it
conv --in "$work/in" --bound --format timespec
sed -n 2p "$work/out" | grep -Eq '^1700000000\.500000000 [0-9]+ extrapolated$' ||
  fail "--bound --format timespec: $(cat "$work/out")"

# Beyond reach: 2 s + 1 ns after, counter 0 (1000 s before), INT64_MAX: errors, named;
# the stamp within reach between them still converts; exit 1.
printf '%s\n' $((B + 5000000001)) 0 $((B + 2000000000)) 9223372036854775807 > "$work/in"
conv --in "$work/in"
rc=$?
[ $rc -eq 1 ] || fail "beyond reach: exit $rc"
[ "$(cat "$work/out")" = 1700000002000000000 ] || fail "beyond reach printed: $(cat "$work/out")"
[ "$(grep -c "beyond the history's reach" "$work/err")" -eq 3 ] || fail "beyond reach: $(cat "$work/err")"
grep -q "^faststamp convert: line 2: stamp 0: beyond" "$work/err" || fail "counter 0: $(cat "$work/err")"

# Text given to --binary: named as text, nothing converted (it read as 2081 and 2038).
printf '%s\n' $((B + 1500000000)) $((B + 2500000000)) > "$work/text"
conv --in "$work/text" --binary
rc=$?
[ $rc -eq 1 ] && [ ! -s "$work/out" ] || fail "text as --binary: exit $rc, printed $(cat "$work/out")"
grep -q "looks like text, not a little-endian word" "$work/err" || fail "text as --binary: $(cat "$work/err")"

# A binary stamp file read as text: 10 errors, then a stop with the count and the hint.
python3 -c '
import random, struct, sys
r = random.Random(7)
sys.stdout.buffer.write(b"".join(struct.pack("<Q", '$B' + r.randrange(2000000000, 3000000000)) for _ in range(100000)))' > "$work/bin"
[ "$(tr -cd '\n' < "$work/bin" | wc -c)" -gt 1000 ] || fail "the binary file has few newlines"
conv --in "$work/bin"
rc=$?
[ $rc -eq 1 ] && [ ! -s "$work/out" ] || fail "binary as text: exit $rc, printed $(head -c 300 "$work/out")"
[ "$(wc -l < "$work/err")" -le 11 ] || fail "binary as text: $(wc -l < "$work/err") lines of stderr"
grep -q "^faststamp convert: stopped after [0-9]* lines (10 errors, 0 converted): the input looks binary: .*--binary" "$work/err" ||
  fail "binary as text: no stop with a hint: $(cat "$work/err")"
# ... and as --binary, every word converts, inside the history
conv --in "$work/bin" --binary || fail "the binary file with --binary: exit $?: $(head -3 "$work/err")"
[ "$(wc -l < "$work/out")" -eq 100000 ] && ! grep -q extrapolated "$work/out" || fail "--binary: $(wc -l < "$work/out") lines"

# /dev/zero ends: as text (no newline in 64 KiB: at once), as --binary (counter 0 is
# beyond reach: 10 errors).
timeout 30 "$tool" convert --history "$work/h" --in /dev/zero > "$work/out" 2> "$work/err"
rc=$?
[ $rc -eq 1 ] || fail "/dev/zero as text: exit $rc: $(head -3 "$work/err")"
grep -q "no newline in 65536 bytes" "$work/err" && grep -q -- "--binary" "$work/err" || fail "/dev/zero: $(cat "$work/err")"
timeout 30 "$tool" convert --history "$work/h" --in /dev/zero --binary > "$work/out" 2> "$work/err"
rc=$?
[ $rc -eq 1 ] || fail "/dev/zero --binary: exit $rc: $(head -3 "$work/err")"
grep -q "^faststamp convert: stopped after 10 words (10 errors, 0 converted)" "$work/err" ||
  fail "/dev/zero --binary: $(cat "$work/err")"

# --format iso on every clock, from a record of this process's stamps (stamplog).
if ! "$stamplog" "$work/log.bin" "$work/clock.fth" 100 2> "$work/err"; then
  grep -q 'Operation not supported' "$work/err" || fail "stamplog: $(cat "$work/err")"
  echo "SKIP: no counter in use (generic backend): no record for --format iso on every clock"
  exit 77
fi
up=$(cut -d' ' -f1 /proc/uptime)
for clock in realtime tai monotonic boottime raw; do
  "$tool" convert --history "$work/clock.fth" --in "$work/log.bin" --binary --format iso \
    --clock $clock > "$work/out" 2> "$work/err" || fail "--clock $clock: exit $?: $(cat "$work/err")"
  line=$(head -1 "$work/out")
  case $clock in
    realtime) re='^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9}Z( extrapolated)?$' ;;
    tai) re='^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9} TAI( extrapolated)?$' ;;
    *) re='^PT[0-9]+H[0-5][0-9]M[0-5][0-9]\.[0-9]{9}S( extrapolated)?$' ;;
  esac
  [[ $line =~ $re ]] || fail "--format iso --clock $clock: '$line'"
  if [ $clock = boottime ]; then
    # the time since the boot, as /proc/uptime says (read after it)
    s=$(sed -E 's/^PT([0-9]+)H([0-9]+)M([0-9]+)\..*/\1 \2 \3/' <<< "$line" | awk '{ print $1 * 3600 + $2 * 60 + $3 }')
    awk -v s="$s" -v u="$up" 'BEGIN { exit !(s <= u + 1 && s >= u - 60) }' ||
      fail "BOOTTIME $line is $s s; uptime $up s"
  fi
done
echo "convert: extrapolated stamps marked and counted, stamps beyond reach refused, binary/text mix-ups stopped with a hint, iso per clock"
