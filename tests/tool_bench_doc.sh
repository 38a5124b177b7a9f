#!/usr/bin/env bash
# tool_bench_doc.sh FASTSTAMP - scripts/bench-doc on saved outputs (tests/data/bench: a
# trimmed `faststamp bench --quick --json` and a `faststamp check --quick`): the
# machine/date header on both blocks, a row for every operation of the JSON, the main
# tables, the check verbatim; bad inputs refused. FASTSTAMP is not run: the script
# must not break silently when nobody regenerates docs/benchmarks.md.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../scripts/bench-doc
data=$here/data/bench
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
work=$(mktemp -d /tmp/fts-bench-doc.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

doc() {
  "$script" --bench-json "$data/bench-quick.json" --check-text "$data/check-quick.txt" \
    --cpu-model "Fixture CPU 9000" --kernel 6.1.0-fixture --date 2026-01-02 "$@"
}
doc > "$work/doc.md" 2> "$work/err" || fail "exit $?: $(cat "$work/err")"
has() { grep -qF -- "$1" "$work/doc.md" || fail "no '$1' in the output:
$(cat "$work/doc.md")"; }

header='**Machine:** Fixture CPU 9000, 2 vCPUs, kernel clocksource `kvm-clock`, Linux 6.1.0-fixture. **Measured:** 2026-01-02.'
[ "$(grep -cF -- "$header" "$work/doc.md")" -eq 2 ] || fail "the machine/date header is not on both blocks"
for s in '## `faststamp bench`' '## `faststamp check`' '### Two threads on two CPUs against one' \
         '### Accuracy' '### The calibration history on a simulated day' \
         "### The machine's shared history against a process's own" \
         'Backend `tsc`, counter `rdtsc` at 2095.997 MHz; 15 interleaved rounds' \
         '| `store` | 19.04 | 18.83 | 24.74 | 0.67 |' '| `clock_gettime` | 28.25 | 26.92 | 35.47 | 1.00 |' \
         '| immediate | 2000 |' '| late | 1024 |' '| knots | 5336 |' \
         '`convert_monotonic` 1.10' '| 50ms | - | - | - | - | - | - | - | - | - |' 'check passed'; do
  has "$s"
done
# Every operation of the JSON (KEY_ns ... KEY_ratio_clock_gettime) has its row.
ops=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print("\n".join(k[:-20] for k in d if k.endswith("_ratio_clock_gettime") and not k.startswith("shared_")))' \
  "$data/bench-quick.json") || fail "python3 cannot read the fixture"
[ "$(echo "$ops" | wc -l)" -ge 8 ] || fail "the fixture lost its operations: $ops"
for k in $ops; do
  has "| \`$k\` |"
done
# The check's output as it was, in a code block.
python3 - "$work/doc.md" "$data/check-quick.txt" <<'PY' || fail "the check output is not in the doc verbatim"
import sys
doc, check = open(sys.argv[1]).read(), open(sys.argv[2]).read()
sys.exit(0 if "```\n" + check.rstrip("\n") + "\n```" in doc else 1)
PY
# -o writes the same.
doc -o "$work/out.md" > "$work/stdout" || fail "-o: exit $?"
[ ! -s "$work/stdout" ] || fail "-o printed to stdout"
cmp -s "$work/doc.md" "$work/out.md" || fail "-o wrote something else"

# Bad inputs: exit 1 and a reason, no document.
bad() {
  local pattern=$1
  shift
  "$script" --check-text "$data/check-quick.txt" --date 2026-01-02 "$@" > "$work/out" 2> "$work/err"
  local rc=$?
  [ $rc -eq 1 ] || fail "'$*': exit $rc, not 1: $(cat "$work/err")"
  grep -q -- "$pattern" "$work/err" || fail "'$*': '$pattern' not on stderr: $(cat "$work/err")"
  [ ! -s "$work/out" ] || fail "'$*' printed a document"
}
echo 'not json' > "$work/bad.json"
echo '{"store_ns": 1}' > "$work/noops.json"
bad "not JSON" --bench-json "$work/bad.json"
bad "no operations" --bench-json "$work/noops.json"
bad "No such file" --bench-json "$work/missing.json"
echo 'check passed' > "$work/check.txt"
bad "no accuracy table" --bench-json "$data/bench-quick.json" --check-text "$work/check.txt"
echo "ok"
