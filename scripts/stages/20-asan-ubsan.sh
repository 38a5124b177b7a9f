#!/usr/bin/env bash
# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
b=$FTS_OUT/build-asan
cmake -S "$FTS_TOP" -B "$b" -DCMAKE_BUILD_TYPE=Debug -DFASTSTAMP_WERROR=ON -DFASTSTAMP_SANITIZE=ON
cmake --build "$b" -j"$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$FTS_TOP/scripts/lib/ctest-run" 20-asan-ubsan "$b" -j1 -LE install
