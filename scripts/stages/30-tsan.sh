#!/usr/bin/env bash
# The concurrency tests under ThreadSanitizer (clang).
set -euo pipefail
b=$FTS_OUT/build-tsan
CC=clang cmake -S "$FTS_TOP" -B "$b" -DCMAKE_BUILD_TYPE=Debug -DFASTSTAMP_WERROR=ON -DFASTSTAMP_TSAN=ON
cmake --build "$b" -j"$(nproc)"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --test-dir "$b" --output-on-failure -j1 -L concurrency
