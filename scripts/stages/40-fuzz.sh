#!/usr/bin/env bash
# The libFuzzer targets (clang, ASan+UBSan), as regression tests: first the checked-in
# corpus replayed input by input (CTest label fuzz), then a fixed number of inputs
# from a fixed seed on top of it, with no time cap, so that a slow machine runs the
# same count. The path libFuzzer takes still depends on the machine (the order it
# reads the corpus in), so this is a regression net, not a search: to look for new
# inputs, run scripts/fuzz-explore. Any crash, sanitizer report or broken invariant
# fails the stage; the input that caused it is kept in $FTS_OUT/fuzz-artifacts/.
set -euo pipefail
seed=${FTS_FUZZ_SEED:-1}
declare -A runs=([fuzz_calib]=130000 [fuzz_parse_word]=10000000 [fuzz_cpuinfo_flag]=5000000
                 [fuzz_histfile]=100000 [fuzz_shared]=10000 [fuzz_events]=1000000)
b=$FTS_OUT/build-fuzz
art=$FTS_OUT/fuzz-artifacts
if ! command -v clang >/dev/null; then
  echo "SKIP: clang is not installed"
  exit 77
fi
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' |
     clang -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
  echo "SKIP: clang cannot link libFuzzer (libclang-rt-dev missing)"
  exit 77
fi
CC=clang cmake -S "$FTS_TOP" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFASTSTAMP_WERROR=ON \
  -DFASTSTAMP_FUZZ=ON
cmake --build "$b" -j"$(nproc)" --target fuzzers
. "$FTS_TOP/scripts/lib/sanitizer-env"
echo "=== the corpus, replayed"
"$FTS_TOP/scripts/lib/ctest-run" 40-fuzz "$b" -j"$(nproc)" -L fuzz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$art"
mkdir -p "$art"
# One fuzzer a core: each is one process of pure computation with a fixed input count.
fuzz_one() {
  local f=$1 rc=0
  mkdir -p "$work/$f"
  cp "$FTS_TOP/tests/fuzz/corpus/$f"/* "$work/$f/"
  "$b/tests/fuzz/$f" -seed="$seed" -runs="${runs[$f]}" -print_final_stats=1 -timeout=10 \
    -artifact_prefix="$art/$f-" "$work/$f" > "$work/$f.log" 2>&1 || rc=$?
  echo $rc > "$work/$f.rc"
}
for f in "${!runs[@]}"; do
  while [ "$(jobs -pr | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  fuzz_one "$f" &
done
wait
failed=()
for f in "${!runs[@]}"; do
  echo "=== $f: ${runs[$f]} inputs from seed $seed"
  if [ "$(cat "$work/$f.rc" 2>/dev/null)" = 0 ]; then
    grep -E '^#[0-9]+[[:space:]]+DONE' "$work/$f.log" | tail -n 1 || true
    grep -E 'stat::(number_of_executed_units|average_exec_per_sec)' "$work/$f.log" || true
  else
    failed+=("$f")
    grep -E -B 2 -A 30 'invariant failed|bound misses|runtime error|ERROR: (AddressSanitizer|libFuzzer)' \
      "$work/$f.log" | head -n 60
    ls "$art"/"$f"-* 2>/dev/null | sed 's/^/reproducer: /'
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzers failed: ${failed[*]} (run a reproducer: $b/tests/fuzz/<fuzzer> <file>;"
  echo "FUZZ_CALIB_TRACE=1 prints fuzz_calib's samples and conversions)"
  exit 1
fi
echo "all fuzzers ran their inputs without a failure"
