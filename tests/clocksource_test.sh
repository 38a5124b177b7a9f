#!/usr/bin/env bash
# clocksource_test.sh FASTSTAMP - the backend decision, shown every clocksource a kernel
# may keep time with, on whatever this machine keeps time with: in a mount namespace of
# its own, a file naming the clocksource is bound over the kernel's
# current_clocksource before the command starts (the library reads it as it loads).
#   tsc                              the counter, the kernel vouches for it
#   kvm-clock, hyperv_clocksource_tsc_page, xen
#                                    the counter, proven across CPUs: `info --calibrate`
#                                    says proven, `serve` publishes, a client attaches,
#                                    `check --quick` passes
#   hpet, acpi_pm                    generic; the counter again when forced
# x86_64 with an invariant TSC; root (for the mount). Exit 77 with the reason otherwise.
set -uo pipefail
tool=$1
cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
fail() { echo "FAIL: $*"; exit 1; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the TSC decision is x86_64's"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: binding a file over $cs needs root"; exit 77; }
command -v unshare >/dev/null || { echo "SKIP: no unshare(1)"; exit 77; }
export FASTSTAMP_SHARED=0
FASTSTAMP_BACKEND=tsc "$tool" info | grep -q '^backend: *tsc$' ||
  { echo "SKIP: no counter backend in this build"; exit 77; }
"$tool" info | grep -q '^cpu flags:.*invariant_tsc' ||
  { echo "SKIP: the TSC is not invariant here: the library never chooses it"; exit 77; }
work=$(mktemp -d /tmp/fts-cs.XXXXXX)
chmod 755 "$work"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

# as CLOCKSOURCE CMD...: CMD sees CLOCKSOURCE as the kernel's
as() {
  local name=$1
  shift
  printf '%s\n' "$name" > "$work/cs-$name"
  unshare -m sh -c 'mount --make-rprivate / && mount --bind "$0" '"$cs"' && exec "$@"' \
    "$work/cs-$name" "$@"
}

row() {   # row CLOCKSOURCE BACKEND [ENV...]
  local name=$1 want=$2
  shift 2
  out=$(as "$name" env "$@" "$tool" info --calibrate) || fail "$name: info exited $?"
  got=$(sed -n 's/^backend: *//p' <<< "$out")
  proof=$(sed -n 's/^across CPUs: *//p' <<< "$out")
  printf '%-30s %-22s backend %-8s %s\n' "$name" "${*:-automatic}" "$got" "$proof"
  [ "$got" = "$want" ] || fail "$name ${*:-}: backend $got, expected $want: $(grep '^reason' <<< "$out")"
  case "$name:$got" in
    tsc:tsc) [[ $proof == "not needed"* ]] || fail "$name: the proof should not be needed: $proof";;
    *:tsc) [[ $proof == proven* ]] || fail "$name: the counter is not proven: $proof";;
  esac
}

for name in tsc kvm-clock hyperv_clocksource_tsc_page xen; do
  row "$name" tsc
done
for name in hpet acpi_pm; do
  row "$name" generic
  row "$name" tsc FASTSTAMP_BACKEND=tsc
done

# Where the kernel keeps time with a clock computed from the counter: the machine's
# history is published, with its proof, and a client takes it without its own.
for name in kvm-clock hyperv_clocksource_tsc_page; do
  d=$work/run-$name
  mkdir -m 755 "$d"
  as "$name" "$tool" serve --path "$d/clock" --interval-ms 50 > "$work/serve-$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do [ -e "$d/clock" ] && break; sleep 0.05; done
  [ -e "$d/clock" ] || fail "$name: serve did not publish: $(cat "$work/serve-$name.log")"
  out=$(as "$name" env FASTSTAMP_SHARED="$d/clock" "$tool" info --calibrate)
  grep -q "^history: *shared" <<< "$out" || fail "$name: a client did not attach: $(grep '^history' <<< "$out")"
  echo "$name: serve publishes, a client attaches ($(sed -n 's/^across CPUs: *//p' <<< "$out"))"
  as "$name" "$tool" check --quick > "$work/check-$name.log" 2>&1 ||
    fail "$name: check --quick failed: $(tail -n 20 "$work/check-$name.log")"
  echo "$name: check --quick passed; $(grep 'ordered counter read' "$work/check-$name.log")"
done
echo "every clocksource decided as it should"
