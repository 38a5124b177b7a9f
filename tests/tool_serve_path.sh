#!/usr/bin/env bash
# tool_serve_path.sh FASTSTAMP - `serve` refuses, at once and before any sampling, a
# --path (or --record) that names a directory or ends in '/', and leaves nothing behind
# (no PATH.lock, no PATH.new.PID); on the generic backend it says that the backend is
# generic and why, not which counter it would have used.
set -uo pipefail
tool=$1
work=$(mktemp -d /tmp/fts-serve-path.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
chmod 700 "$work"
mkdir -m 700 "$work/dir" "$work/dir/sub"
export FASTSTAMP_SHARED=0

# refused WHAT PATTERN ARGS...: serve exits 1 within 5 s with PATTERN on stderr
refused() {
  local what=$1 pattern=$2
  shift 2
  timeout 5 "$tool" serve "$@" > "$work/out" 2> "$work/err"
  local rc=$?
  [ $rc -eq 1 ] || fail "$what: exit $rc, not 1 (124: still running): $(cat "$work/err")"
  grep -q -- "$pattern" "$work/err" || fail "$what: '$pattern' not on stderr: $(cat "$work/err")"
  [ ! -s "$work/out" ] || fail "$what: printed $(cat "$work/out")"
  left=$(cd "$work" && find . -mindepth 1 | sort | tr '\n' ' ')
  [ "$left" = "./dir ./dir/sub ./err ./out " ] || fail "$what: left behind: $left"
}
refused "--path DIR/" "--path $work/dir/: ends in '/'" --path "$work/dir/"
refused "--path DIR/SUB/" "ends in '/'" --path "$work/dir/sub/"
refused "--path DIR" "--path $work/dir/sub: Is a directory" --path "$work/dir/sub"
refused "--path DIR/." "Is a directory" --path "$work/dir/."
refused "--record DIR" "--record $work/dir: Is a directory" --path "$work/dir/clock" --record "$work/dir"
refused "--record DIR/" "--record $work/dir/x/: ends in '/'" --path "$work/dir/clock" --record "$work/dir/x/"

# The generic backend: said so, with the reason.
FASTSTAMP_BACKEND=generic timeout 5 "$tool" serve --path "$work/dir/clock" > "$work/out" 2> "$work/err"
rc=$?
[ $rc -eq 1 ] || fail "generic: exit $rc, not 1"
grep -q "no counter in use: the backend is generic (FASTSTAMP_BACKEND=generic in the environment)" \
  "$work/err" || fail "generic: $(cat "$work/err")"
grep -q "backend tsc\|backend cntvct\|backend rdtime" "$work/err" && fail "generic: names a counter: $(cat "$work/err")"
[ -z "$(ls "$work/dir" | grep -v '^sub$')" ] || fail "generic: left $(ls "$work/dir")"

# A plain file name in the same directory still publishes (where there is a counter).
"$tool" info | grep -q '^backend: *generic$' && { echo "refusals ok; SKIP: no counter to publish with"; exit 0; }
"$tool" serve --path "$work/dir/clock" > "$work/serve.out" 2> "$work/serve.err" &
pids+=($!)
for _ in $(seq 100); do [ -e "$work/dir/clock" ] && break; sleep 0.1; done
[ -e "$work/dir/clock" ] || fail "serve --path FILE did not publish: $(cat "$work/serve.err")"
kill -TERM "${pids[0]}"
wait "${pids[0]}" || fail "serve exited $? on SIGTERM: $(cat "$work/serve.err")"
pids=()
echo "serve refuses directories at once and leaves nothing behind"
