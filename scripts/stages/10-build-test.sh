#!/usr/bin/env bash
# Release build with -Werror; the whole CTest suite.
set -euo pipefail
. "$FTS_TOP/scripts/lib/counter-env"
b=$FTS_OUT/build
cmake -S "$FTS_TOP" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFASTSTAMP_WERROR=ON
cmake --build "$b" -j"$(nproc)"
"$FTS_TOP/scripts/lib/ctest-run" 10-build-test "$b" -j1
# The shared history as an unprivileged user: faststamp serve publishing in a
# directory of its own, clients refusing what they should. As root, once more as
# nobody (the test that needs root to chown skips there, exit 77).
if [ "$(id -u)" -eq 0 ]; then
  echo "=== test_shared as uid 65534"
  setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all test -x "$b/faststamp" ||
    { echo "uid 65534 cannot reach $b/faststamp: a directory above it is closed to others"; exit 1; }
  rc=0
  FASTSTAMP_SHARED=0 setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$b/tests/test_shared" || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || { echo "test_shared as uid 65534 failed ($rc)"; exit 1; }
fi
