#!/usr/bin/env bash
# The libFuzzer targets (clang, ASan+UBSan): each runs a fixed number of inputs from a
# fixed seed (about a minute each here; FTS_FUZZ_SECONDS caps it, FTS_FUZZ_SEED changes
# the seed) on top of the checked-in seed corpus, copied to a scratch directory so the
# run does not touch the repository. A fixed seed makes CI repeat what was run before
# it landed; fuzz longer or with other seeds by hand to look for new inputs.
# Any crash, sanitizer report or broken invariant fails the
# stage; the input that caused it is kept in $FTS_OUT/fuzz-artifacts/.
set -euo pipefail
secs=${FTS_FUZZ_SECONDS:-150}
seed=${FTS_FUZZ_SEED:-1}
declare -A runs=([fuzz_calib]=130000 [fuzz_parse_word]=10000000 [fuzz_cpuinfo_flag]=5000000)
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
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$art"
mkdir -p "$art"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=()
for f in fuzz_calib fuzz_parse_word fuzz_cpuinfo_flag; do
  mkdir -p "$work/$f"
  cp "$FTS_TOP/tests/fuzz/corpus/$f"/* "$work/$f/"
  echo "=== $f: ${runs[$f]} inputs from seed $seed (at most ${secs}s)"
  if "$b/tests/fuzz/$f" -seed="$seed" -runs="${runs[$f]}" -max_total_time="$secs" \
       -print_final_stats=1 -timeout=10 \
       -artifact_prefix="$art/$f-" "$work/$f" > "$work/$f.log" 2>&1; then
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
echo "all fuzzers ran ${secs}s without a failure"
