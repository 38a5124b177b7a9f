# faststamp bench: the cost, scaling and accuracy benchmark subcommand, a folder of
# parts (tools/bench/bench_int.h lists them).
set(FTS_BENCH_SOURCES tools/bench/bench.c tools/bench/ops.c tools/bench/scale.c
  tools/bench/accuracy.c tools/bench/history.c tools/bench/procs.c tools/bench/fresh.c
  tools/bench/output.c tools/bench/plot.c tools/bench/traceload.c)
list(APPEND FTS_TOOL_SOURCES ${FTS_BENCH_SOURCES})
list(APPEND FTS_TOOL_LIBS m)
# The history figures feed fts_calib the simulated day the tests use (tests/daysim.h):
# one clock model for both, on the bench's include path only.
set_source_files_properties(${FTS_BENCH_SOURCES} PROPERTIES
  INCLUDE_DIRECTORIES ${PROJECT_SOURCE_DIR}/tests)
