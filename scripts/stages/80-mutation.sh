#!/usr/bin/env bash
# Planted bugs (tests/mutation/mutants.ini), each built into a scratch copy and run
# against the tests that must catch it: the stage fails if any survives. Only what a
# mutant touches is rebuilt, and only its listed tests run (scripts/mutate).
set -euo pipefail
exec python3 "$FTS_TOP/scripts/mutate"
