# faststamp bench: the cost, scaling and accuracy benchmark subcommand.
list(APPEND FTS_TOOL_SOURCES tools/bench.c tools/bench_plot.c)
list(APPEND FTS_TOOL_LIBS m)
