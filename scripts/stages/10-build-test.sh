#!/usr/bin/env bash
# Release build with -Werror; the whole CTest suite, then test_shared as uid 65534.
# FTS_QUICK=1 (scripts/run-tests --quick): the build and the unit tests only.
set -euo pipefail
. "$FTS_TOP/scripts/lib/counter-env"
b=$FTS_OUT/build
cmake -S "$FTS_TOP" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFASTSTAMP_WERROR=ON
cmake --build "$b" -j"$(nproc)"
if [ -n "${FTS_QUICK:-}" ]; then
  exec "$FTS_TOP/scripts/lib/ctest-run" 10-build-test "$b" -j"$(nproc)" -L "unit|docs"
fi
"$FTS_TOP/scripts/lib/ctest-run" 10-build-test "$b" -j"$(nproc)"
# The shared history as an unprivileged user: faststamp serve publishing in a
# directory of its own, clients refusing what they should. As root, once more as
# nobody (the test that needs root to chown skips there, exit 77). The checkout may
# sit where nobody cannot reach it (/root is 0700), so nobody runs copies of the test
# and of the command (FTS_TEST_TOOL) from a directory of its own.
if [ "$(id -u)" -eq 0 ]; then
  echo "=== test_shared as uid 65534"
  nob=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
  u=$(mktemp -d)
  trap 'rm -rf "$u"' EXIT
  chmod 755 "$u"
  cp "$b/tests/test_shared" "$b/faststamp" "$u/"
  cp -P "$b"/libfaststamp.so* "$u/" 2>/dev/null || true
  # What they load must come from the system or the copy, never the build tree.
  for f in "$u/test_shared" "$u/faststamp"; do
    libs=$("${nob[@]}" env LD_LIBRARY_PATH="$u" ldd "$f") ||
      { echo "uid 65534 cannot load $f"; exit 1; }
    if grep -E "not found|$b/" <<< "$libs"; then
      echo "uid 65534: $f needs a library it cannot reach"; exit 1
    fi
  done
  rc=0
  (cd "$u" && FASTSTAMP_SHARED=0 FTS_TEST_TOOL="$u/faststamp" LD_LIBRARY_PATH="$u" \
     "${nob[@]}" "$u/test_shared") || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || { echo "test_shared as uid 65534 failed ($rc)"; exit 1; }
fi
