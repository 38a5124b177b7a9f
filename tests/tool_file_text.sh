#!/usr/bin/env bash
# tool_file_text.sh FASTSTAMP MKHIST - text that comes from a file or the input reaches
# the terminal only as printable ASCII: `history` shows a record's clocksource and event
# name, `convert` a malformed line, and `info` what it found in the environment, with
# every other byte as \xNN (and '\' as '\\'), so that no escape sequence in a file can
# act on the terminal that shows it.
set -uo pipefail
tool=$1 mkhist=$2
work=$(mktemp -d /tmp/fts-file-text.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# printable FILE: no byte outside printable ASCII but the newline
printable() { ! LC_ALL=C grep -q '[^ -~]' "$1"; }

"$mkhist" "$work/h" || fail "mkhist exited $?"
"$tool" history "$work/h" > "$work/out" 2> "$work/err" || fail "history exited $?: $(cat "$work/err")"
printable "$work/out" || fail "history printed raw bytes: $(od -c "$work/out" | head)"
grep -qF 'clocksource: kvm\x1b[2J\x09clock\\' "$work/out" ||
  fail "the clocksource is not shown escaped: $(grep clocksource "$work/out")"
grep -qF 'first:       step\x1b]0;owned\x07\x0d\x9b31m (5000 ns)' "$work/out" ||
  fail "the event's name is not shown escaped: $(grep first "$work/out")"

printf '12\033[2J\n\0334\n' | "$tool" convert --history "$work/h" > "$work/out" 2> "$work/err"
[ $? -eq 1 ] || fail "convert of two malformed lines did not exit 1"
printable "$work/err" || fail "convert echoed raw bytes: $(od -c "$work/err" | head)"
grep -qF "line 1: '12\x1b[2J'" "$work/err" && grep -qF "line 2: '\x1b4'" "$work/err" ||
  fail "convert: $(cat "$work/err")"

# info: the environment's text, and the shared history's path in the note that says why
# it is not used, are shown the same way.
FASTSTAMP_BACKEND=$'ts\033c' FASTSTAMP_SHARED=$'/nonexistent/a\033[2Jb' "$tool" info --calibrate \
  > "$work/out" 2> "$work/err" || fail "info exited $?: $(cat "$work/err")"
printable "$work/out" || fail "info printed raw bytes: $(od -c "$work/out" | head)"
grep -qF 'FASTSTAMP_BACKEND="ts\x1bc"' "$work/out" || fail "info: $(grep environment "$work/out")"
if grep -q '^history: *process' "$work/out"; then
  grep -qF '/nonexistent/a\x1b[2Jb: ' "$work/out" || fail "info: $(grep history "$work/out")"
fi

# The path, given by the user, is shown the same way.
cp "$work/h" "$work/a$(printf '\033')b"
"$tool" history "$work/a$(printf '\033')b" > "$work/out" || fail "history of a strange name exited $?"
printable "$work/out" || fail "history printed the path raw"
echo "text from files and input is shown escaped"
