/* tool.h - shared by the faststamp command's subcommands. */
#ifndef FTS_TOOL_H
#define FTS_TOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* A subcommand: main-like; returns the exit status (0 ok, 1 fell short, 2 usage). */
struct fts_tool_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

int fts_tool_info(int argc, char **argv);
int fts_tool_check(int argc, char **argv);
int fts_tool_bench(int argc, char **argv);
int fts_tool_rx(int argc, char **argv);
int fts_tool_tx(int argc, char **argv);
int fts_tool_convert(int argc, char **argv);
int fts_tool_history(int argc, char **argv);

/* Helpers (util.c). */
int64_t fts_tool_now(clockid_t id);
/* Strict parsers: whole string, in range. 0 or -1. */
int fts_tool_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int fts_tool_parse_double(const char *s, double min, double max, double *out);
/* Sorts v in place; the q-quantile (0..1). */
int64_t fts_tool_quantile(int64_t *v, size_t n, double q);
double fts_tool_quantile_d(double *v, size_t n, double q);
/* Pin the calling thread to cpu. 0 or -1. */
int fts_tool_pin(int cpu);
/* Number of CPUs this process may run on. */
int fts_tool_cpus(void);
/* Print "usage: ..." from text to f. For unknown options: to stderr, return 2. */
int fts_tool_usage_error(const char *cmd, const char *usage, const char *fmt, const char *arg);

#endif
