#!/usr/bin/env bash
# Release build with -Werror; the whole CTest suite.
set -euo pipefail
b=$FTS_OUT/build
cmake -S "$FTS_TOP" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFASTSTAMP_WERROR=ON
cmake --build "$b" -j"$(nproc)"
"$FTS_TOP/scripts/lib/ctest-run" 10-build-test "$b" -j1
