#!/usr/bin/env bash
# tool_convert_input.sh FASTSTAMP MKHIST - `faststamp convert`'s text input, line by line:
# a line is blanks, then decimal digits or 0x and hexadecimal ones, then blanks, and a
# CR at its end; every other line (empty, blanks only, a lone 0x, a sign behind a
# vertical tab, form feed or CR, a NUL byte, more than 255 bytes, over 64 bits) is named
# on stderr with its true number, prints nothing, and exit is 1; every valid line around
# it converts, in order.
set -uo pipefail
tool=$1 mkhist=$2
work=$(mktemp -d /tmp/fts-convert-input.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$mkhist" "$work/h" || fail "mkhist exited $?"
# The record: counter 1e9..3e9 at 1 GHz, so counter 1.5e9 reads ...01.5 s.
t1=1700000001500000000 t2=1700000002500000000

# Each row: the line's bytes (printf), and what it prints: a time, or BAD.
rows=(
  '1500000000'            "$t1"
  ''                      BAD
  '   '                   BAD
  '\r'                    BAD
  '0x'                    BAD
  '0X'                    BAD
  '\v-5'                  BAD
  '\f-1'                  BAD
  '\r-1'                  BAD
  '0x\t-5'                BAD
  '-1'                    BAD
  '+1500000000'           BAD
  '15 00'                 BAD
  '0x-5'                  BAD
  '5\r6'                  BAD
  '18446744073709551616'  BAD
  '0x10000000000000000'   BAD
  'ab\0cd'                BAD
  '\0'                    BAD
  '2500000000'            "$t2"
  ' \t1500000000 \t\r'    "$t1"
  '0x5968_2f00'           BAD
  '0x59682f00'            "$t1"
  '0X9502F900'            "$t2"
  '0x8000000000000005'    5
  '9223372036854775813'   5
  "$(printf '%300s' 1500000000)" BAD
  '1500000000'            "$t1"
)
: > "$work/in"
want_out=() want_bad=()
for ((i = 0; i < ${#rows[@]}; i += 2)); do
  printf -- "${rows[i]}\n" >> "$work/in"
  if [ "${rows[i + 1]}" = BAD ]; then want_bad+=($((i / 2 + 1))); else want_out+=("${rows[i + 1]}"); fi
done
# The last line without its newline still counts.
printf '2500000000' >> "$work/in"
want_out+=("$t2")

"$tool" convert --history "$work/h" --in "$work/in" > "$work/out" 2> "$work/err"
rc=$?
[ $rc -eq 1 ] || fail "exit $rc, not 1: $(cat "$work/err")"
mapfile -t got < "$work/out"
[ "${got[*]}" = "${want_out[*]}" ] ||
  fail "converted: ${got[*]}; expected: ${want_out[*]}; stderr: $(cat "$work/err")"
named=$(sed -n 's/^faststamp convert: line \([0-9]*\): .*/\1/p' "$work/err" | tr '\n' ' ')
[ "$named" = "${want_bad[*]} " ] || fail "lines named: $named; expected: ${want_bad[*]}; $(cat "$work/err")"
[ "$(wc -l < "$work/err")" -eq ${#want_bad[@]} ] || fail "stderr: $(cat "$work/err")"
grep -q "^faststamp convert: line 18: 'ab\\\\x00cd': holds a NUL byte" "$work/err" ||
  fail "the NUL line is not named as such: $(cat "$work/err")"
grep -q "line 27: '   *.*\.\.\.': longer than 255 bytes" "$work/err" ||
  fail "the long line is not named as such: $(cat "$work/err")"
grep -q "line 7: '\\\\x0b-5': not a stamp" "$work/err" ||
  fail "a vertical tab is not shown escaped: $(cat "$work/err")"

# Valid lines only: exit 0, nothing on stderr; standard input as '-'.
printf '1500000000\r\n0x9502f900\n' | "$tool" convert --history "$work/h" --in - > "$work/out" 2> "$work/err" ||
  fail "valid CRLF input: exit $?: $(cat "$work/err")"
[ "$(cat "$work/out")" = "$t1"$'\n'"$t2" ] || fail "valid CRLF input printed $(cat "$work/out")"
[ ! -s "$work/err" ] || fail "valid input, yet: $(cat "$work/err")"
# An empty input is no line at all.
"$tool" convert --history "$work/h" < /dev/null > "$work/out" 2> "$work/err" || fail "empty input: exit $?"
[ ! -s "$work/out" ] && [ ! -s "$work/err" ] || fail "empty input printed something"
echo "convert input: ${#want_out[@]} valid lines converted, ${#want_bad[@]} malformed lines named"
