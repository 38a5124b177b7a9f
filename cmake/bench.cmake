# faststamp bench: the cost, scaling and accuracy benchmark subcommand.
list(APPEND FTS_TOOL_SOURCES tools/bench.c tools/bench_plot.c)
list(APPEND FTS_TOOL_LIBS m)
# The history figures feed fts_calib the simulated day the tests use (tests/daysim.h):
# one clock model for both, on bench.c's include path only.
set_source_files_properties(tools/bench.c PROPERTIES
  INCLUDE_DIRECTORIES ${PROJECT_SOURCE_DIR}/tests)
