#!/usr/bin/env bash
# Every test that runs more than one thread (the library's sampler or drain, the tests'
# own; labels concurrency, realclock, process) under ThreadSanitizer (clang), but the
# command's and the package's. A test labelled unit alone runs one thread: nothing for
# TSan to find (tests/onethread.c keeps that label true).
# die_after_fork=0: the fork test's children start the sampler thread (TSan does not
# follow a multi-threaded fork by default).
set -euo pipefail
. "$FTS_TOP/scripts/lib/counter-env"
b=$FTS_OUT/build-tsan
CC=clang cmake -S "$FTS_TOP" -B "$b" -DCMAKE_BUILD_TYPE=Debug -DFASTSTAMP_WERROR=ON -DFASTSTAMP_TSAN=ON
cmake --build "$b" -j"$(nproc)"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0 \
  "$FTS_TOP/scripts/lib/ctest-run" 30-tsan "$b" -j"$(nproc)" \
    -L "concurrency|realclock|process" -LE "install|tool|packet"
