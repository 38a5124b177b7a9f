#!/usr/bin/env bash
# tool_stdout_full.sh FASTSTAMP MKHIST - a command whose output cannot be written (here
# to /dev/full, which refuses every write with ENOSPC) fails: exit 1 and the reason on
# stderr, whatever it would have returned.
set -uo pipefail
tool=$1 mkhist=$2
work=$(mktemp -d /tmp/fts-stdout-full.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -c /dev/full ] && [ -w /dev/full ] || { echo "SKIP: no writable /dev/full"; exit 77; }
export FASTSTAMP_SHARED=0

"$mkhist" "$work/h" || fail "mkhist exited $?"
printf '1500000000\n' > "$work/in"
# full EXPECT ARGS...: exit EXPECT with stdout on /dev/full, the reason on stderr
full() {
  local want=$1
  shift
  "$tool" "$@" > /dev/full 2> "$work/err"
  local rc=$?
  [ $rc -eq "$want" ] || fail "'$*' > /dev/full: exit $rc, not $want: $(cat "$work/err")"
  grep -q "writing the output: No space left on device" "$work/err" ||
    fail "'$*' > /dev/full: no reason on stderr: $(cat "$work/err")"
  # and the same command to a file works
  "$tool" "$@" > "$work/out" 2> "$work/err" || [ "$1" = check ] || fail "'$*' exited $?: $(cat "$work/err")"
  [ -s "$work/out" ] || fail "'$*' printed nothing"
}
full 1 history "$work/h"
full 1 info
full 1 convert --history "$work/h" --in "$work/in"
full 1 --help
full 1 --version
full 1 convert --help
full 1 check --count 100 --late 0
echo "every command fails when its output cannot be written"
