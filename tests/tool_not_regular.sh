#!/usr/bin/env bash
# tool_not_regular.sh FASTSTAMP - a history file must be a regular file: `history` and
# `convert --history` answer at once for a FIFO (whose open would wait for a writer), a
# directory ("Is a directory") and a device, with exit 1; `convert --in` still reads
# stamps from a pipe.
set -uo pipefail
tool=$1
work=$(mktemp -d /tmp/fts-not-regular.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v timeout >/dev/null || { echo "SKIP: no timeout(1)"; exit 77; }

mkfifo "$work/fifo" || { echo "SKIP: mkfifo failed"; exit 77; }
mkdir "$work/dir"
# expect WHAT PATTERN CMD...: exit 1 within 10 s (124 is timeout's), PATTERN on stderr
expect() {
  local what=$1 pattern=$2
  shift 2
  timeout 10 "$@" < /dev/null > "$work/out" 2> "$work/err"
  local rc=$?
  [ $rc -ne 124 ] || fail "$what: still waiting after 10 s"
  [ $rc -eq 1 ] || fail "$what: exit $rc, not 1: $(cat "$work/err")"
  grep -q -- "$pattern" "$work/err" || fail "$what: '$pattern' not on stderr: $(cat "$work/err")"
  [ ! -s "$work/out" ] || fail "$what: printed $(cat "$work/out")"
}
expect "history FIFO" "fifo: a FIFO, not a regular file" "$tool" history "$work/fifo"
expect "convert --history FIFO" "fifo: a FIFO, not a regular file" \
  "$tool" convert --history "$work/fifo"
expect "history DIR" "dir: Is a directory" "$tool" history "$work/dir"
expect "convert --history DIR" "dir: Is a directory" "$tool" convert --history "$work/dir"
expect "history /dev/null" "/dev/null: a device, not a regular file" "$tool" history /dev/null
# Nothing was written into the FIFO's place or beside it.
[ -p "$work/fifo" ] || fail "the FIFO is gone"
[ "$(ls "$work" | sort | tr '\n' ' ')" = "dir err fifo out " ] || fail "left: $(ls "$work")"

# Stamps may still come through a pipe (given a real history: a clock-tagged stamp).
if [ $# -ge 2 ]; then
  "$2" "$work/h" || fail "mkhist exited $?"
  got=$(printf '0x8000000000000007\n' | timeout 10 "$tool" convert --history "$work/h" --in /dev/stdin) ||
    fail "convert --in /dev/stdin (a pipe): exit $?"
  [ "$got" = 7 ] || fail "convert --in /dev/stdin printed '$got'"
fi
echo "a FIFO, a directory and a device are refused at once"
