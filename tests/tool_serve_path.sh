#!/usr/bin/env bash
# tool_serve_path.sh FASTSTAMP - `serve` refuses, at once and before any sampling, a
# --path (or --record) that names a directory or ends in '/', and leaves nothing behind
# (no PATH.lock, no PATH.new.PID); on the generic backend it says that the backend is
# generic and why, not which counter it would have used. What is at --path is replaced
# only if it is a socket no publisher answers at: a regular file or a symbolic link
# there is refused and left as it was (a typo as root must not cost a system file), a
# live publisher's socket too (its lock file removed); a dead publisher's is replaced.
# Every directory above --path is checked: one writable by others and not sticky, or
# (as root) owned by another user, is refused; a sticky one (as /tmp) is not.
# --record refuses a symbolic link.
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
  [ "$left" = "${left_ok:-./dir ./dir/sub ./err ./out }" ] || fail "$what: left behind: $left"
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

# start ARGS...: serve in the background, until it says it publishes (its socket in place)
start() {
  "$tool" serve "$@" > "$work/serve.out" 2> "$work/serve.err" &
  pids=($!)
  for _ in $(seq 150); do grep -q "publishing" "$work/serve.out" && return; sleep 0.1; done
  fail "serve $* did not publish: $(cat "$work/serve.err")"
}
stop() { kill -TERM "${pids[0]}"; wait "${pids[0]}"; pids=(); rm -f "$work/dir/clock.lock"; }

# Nothing but a socket is replaced: a regular file and a symbolic link stay as they were.
rm -f "$work/dir/clock.lock" "$work/serve.out" "$work/serve.err"
left_ok="./dir ./dir/clock ./dir/sub ./err ./out "
echo precious > "$work/dir/clock"
refused "--path FILE" "exists and is a regular file, not a socket" --path "$work/dir/clock"
[ "$(cat "$work/dir/clock")" = precious ] || fail "--path FILE: the file changed"
rm "$work/dir/clock"
ln -s "$work/out" "$work/dir/clock"
refused "--path LINK" "exists and is a symbolic link, not a socket" --path "$work/dir/clock"
[ -L "$work/dir/clock" ] || fail "--path LINK: the link is gone"
rm "$work/dir/clock"
unset left_ok
# --record LINK: not followed (the file it names stays empty).
: > "$work/target"
ln -s "$work/target" "$work/dir/rec"
timeout 30 "$tool" serve --path "$work/dir/clock" --record "$work/dir/rec" > /dev/null 2> "$work/err"
rc=$?
[ $rc -eq 1 ] && grep -q -- "--record $work/dir/rec: a symbolic link (not followed)" "$work/err" ||
  fail "--record LINK: exit $rc: $(cat "$work/err")"
[ ! -s "$work/target" ] || fail "--record LINK: written through"
rm -f "$work/dir/rec" "$work/target" "$work/dir/clock.lock"
# A dead publisher's socket is replaced; a live one's is not, even with its lock gone.
start --path "$work/dir/clock"
kill -KILL "${pids[0]}"; wait "${pids[0]}" 2>/dev/null; pids=()
[ -S "$work/dir/clock" ] || fail "serve killed with -9 left no socket"
start --path "$work/dir/clock"
rm "$work/dir/clock.lock"
timeout 10 "$tool" serve --path "$work/dir/clock" > /dev/null 2> "$work/err"
rc=$?
[ $rc -eq 1 ] && grep -q "a publisher answers at this socket" "$work/err" ||
  fail "a live publisher's socket: exit $rc: $(cat "$work/err")"
kill -0 "${pids[0]}" || fail "the live publisher died"
stop

# Every directory above: writable by others and not sticky, refused; sticky, taken.
mkdir -m 700 "$work/up" "$work/up/d"
chmod 777 "$work/up"
timeout 10 "$tool" serve --path "$work/up/d/clock" > /dev/null 2> "$work/err"
rc=$?
[ $rc -eq 1 ] && grep -q "$work/up: writable by its group or others, and not sticky" "$work/err" ||
  fail "a directory above writable by others: exit $rc: $(cat "$work/err")"
[ -z "$(ls -A "$work/up/d")" ] || fail "a directory above writable by others: left $(ls -A "$work/up/d")"
chmod 1777 "$work/up"
start --path "$work/up/d/clock"
kill -TERM "${pids[0]}"; wait "${pids[0]}"; pids=()
if [ "$(id -u)" -eq 0 ]; then
  chmod 755 "$work/up" && chown 4242 "$work/up"
  timeout 10 "$tool" serve --path "$work/up/d/clock" > /dev/null 2> "$work/err"
  rc=$?
  [ $rc -eq 1 ] && grep -q "$work/up: owned by uid 4242, not root or this user" "$work/err" ||
    fail "a directory above owned by another user: exit $rc: $(cat "$work/err")"
else
  echo "(not root: a directory above owned by another user is not tried)"
fi
echo "serve refuses directories at once and leaves nothing behind; replaces only a dead" \
  "publisher's socket; checks every directory above its path"
