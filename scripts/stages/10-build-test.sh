#!/usr/bin/env bash
# Release build with -Werror; the whole CTest suite.
set -euo pipefail
b=$FTS_OUT/build
cmake -S "$FTS_TOP" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFASTSTAMP_WERROR=ON
cmake --build "$b" -j"$(nproc)"
ctest --test-dir "$b" --output-on-failure -j1
