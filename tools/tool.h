/* tool.h - shared by the faststamp command's subcommands. */
#ifndef FTS_TOOL_H
#define FTS_TOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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
int fts_tool_serve(int argc, char **argv);
int fts_tool_trace(int argc, char **argv);
/* `faststamp trace --format ctf`: events (in time order; reordered) into a new directory
 * dir (force: or one that holds a CTF trace alone, emptied first) as a CTF 1.8 trace on
 * clock (its name in the metadata; absolute: REALTIME or TAI, a time of day). 0, or -1
 * after the message on stderr. */
struct fts_trace_event;
int fts_tool_trace_ctf(const char *dir, struct fts_trace_event **ev, size_t n,
		       const char *clock, int absolute, int pid, uint64_t dropped, int force);
/* `faststamp trace --format perfetto`: events (in time order) into o as Perfetto's
 * protobuf trace, timestamps in ns on the builtin clock clock_id (Perfetto's
 * BuiltinClock: 1 REALTIME, 3 MONOTONIC, 5 MONOTONIC_RAW, 6 BOOTTIME). 0, or -1 (no
 * memory, or a write failed). */
int fts_tool_trace_perfetto(FILE *o, struct fts_trace_event *const *ev, size_t n,
			    unsigned clock_id, int pid);

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
/* Open path for reading, if it is a regular file, without blocking on a FIFO: the fd,
 * or -1 after "faststamp CMD: PATH: why" on stderr (a directory: "Is a directory"). */
int fts_tool_open_regular(const char *cmd, const char *path);
/* The clocks a history file may hold, in the library's order (enum fts__clk, CLOCK_REALTIME
 * first): as --clock names them, and as the kernel does. */
#define FTS_TOOL_NCLK 5
extern const char *const fts_tool_clock_arg[FTS_TOOL_NCLK];
extern const char *const fts_tool_clock_name[FTS_TOOL_NCLK];
/* The history of clock k (of those) in the file at path, and what the file holds in *fi
 * (NULL: not wanted); NULL after "faststamp CMD: PATH: why" on stderr, also when the file
 * holds no history of clock k (the message says its format and the clocks it holds). */
struct fts__fileinfo;
struct fts_calib *fts_tool_load_clock(const char *cmd, const char *path, int k,
				      struct fts__fileinfo *fi);
/* Clock k 0: CLOCK_REALTIME's, which every history file holds (fts_calib_load's). */
struct fts_calib *fts_tool_load_history(const char *cmd, const char *path,
					struct fts__fileinfo *fi);
/* Every clock's history in the file at path into out[k] (NULL for a clock it does not
 * hold), and what the file holds in *fi. 0, or -1 after the message, as above. */
int fts_tool_load_clocks(const char *cmd, const char *path, struct fts_calib *out[FTS_TOOL_NCLK],
			 struct fts__fileinfo *fi);
/* The clocks the file described by fi holds, in words ("CLOCK_REALTIME alone", or a
 * list), into buf[len]; returns buf. */
char *fts_tool_file_clocks(const struct fts__fileinfo *fi, char *buf, size_t len);
/* sec since the epoch as UTC, "YYYY-MM-DDTHH:MM:SS", in day[len]. 0, or -1 when the
 * year is out of range. */
int fts_tool_utc(int64_t sec, char *day, size_t len);
/* Text that came from a file, the shared history, the environment or the input, as it
 * may be printed: the n bytes at s, NULs too, with each byte outside printable ASCII as
 * \xNN and a backslash as \\, so that no escape sequence reaches the terminal.
 * Truncated to fit out[len] (4 bytes a byte in the worst case); returns out. */
char *fts_tool_clean(char *out, size_t len, const char *s, size_t n);
/* The string s cleaned, up to 256 bytes of it, into a buffer that lives as long as the
 * enclosing block (a compound literal): for one printf argument. */
#define FTS_TOOL_CLEAN(s) \
	fts_tool_clean((char[4 * 256 + 1]){ 0 }, 4 * 256 + 1, (s), strlen(s))
/* Print "faststamp CMD: " fmt (with arg), then the usage, to stderr; returns 2. */
int fts_tool_usage_error(const char *cmd, const char *usage, const char *fmt, const char *arg);

/* Option scanning, one rule for every subcommand: names[0..nvalued) take a value and
 * may be given once; the rest are flags, which may repeat; --help and -h print the
 * usage; every word after "--" is an argument. An unknown option, a missing value, a
 * value that is an option ("--history --binary": no option takes a negative number;
 * "-" is a value) and a repeat are usage errors. */
struct fts_tool_opts {
	const char *cmd, *usage;
	const char *const *names;
	int n, nvalued;
	unsigned seen;           /* bit k: names[k] was given */
	int ended;               /* "--" was seen */
};
enum { FTS_OPT_ARG = -1, FTS_OPT_HELP = -2, FTS_OPT_BAD = -3, FTS_OPT_END = -4 };
/* Reads argv[*i], moving *i past a value: the option's index in names (*val = its
 * value, or NULL for a flag); FTS_OPT_ARG for a word that is not an option (*val = it;
 * "-" is a word); FTS_OPT_HELP once the usage went to stdout (exit 0); FTS_OPT_BAD once
 * the error went to stderr (exit 2); FTS_OPT_END for the "--" itself (go on). */
int fts_tool_opt(struct fts_tool_opts *o, int argc, char **argv, int *i, const char **val);
/* A subcommand names its options in an enum (valued ones first) and indexes names[] by
 * it with designated initialisers ([OPT_OUT] = "--out"), so that each case of its switch
 * says which option it handles; this is the opts for such a names[]. */
#define FTS_TOOL_OPTS(cmd, usage, names, nvalued) \
	{ (cmd), (usage), (names), (int)(sizeof(names) / sizeof((names)[0])), (nvalued), 0, 0 }
/* The exit status for FTS_OPT_HELP and FTS_OPT_BAD. */
#define FTS_OPT_EXIT(k) ((k) == FTS_OPT_HELP ? 0 : 2)

#endif
