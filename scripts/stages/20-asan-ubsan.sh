#!/usr/bin/env bash
# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
. "$FTS_TOP/scripts/lib/counter-env"
b=$FTS_OUT/build-asan
cmake -S "$FTS_TOP" -B "$b" -DCMAKE_BUILD_TYPE=Debug -DFASTSTAMP_WERROR=ON -DFASTSTAMP_SANITIZE=ON
cmake --build "$b" -j"$(nproc)"
. "$FTS_TOP/scripts/lib/sanitizer-env"
"$FTS_TOP/scripts/lib/ctest-run" 20-asan-ubsan "$b" -j"$(nproc)" -LE install
