/* util.c - small helpers for the subcommands. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "histfile.h"
#include "tool.h"
#include "clock.h"

int64_t fts_tool_now(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int fts_tool_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	/* strtoull alone would take leading space and a sign. */
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int fts_tool_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int64_t fts_tool_quantile(int64_t *v, size_t n, double q)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_i64);
	return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

double fts_tool_quantile_d(double *v, size_t n, double q)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_d);
	return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

int fts_tool_pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -1 : 0;
}

int fts_tool_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set);
}

char *fts_tool_clean(char *out, size_t len, const char *s, size_t n)
{
	size_t o = 0;

	if (!len)
		return out;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[5];
		size_t el;

		if (c == '\\')
			el = (size_t)snprintf(e, sizeof(e), "\\\\");
		else if (c >= 0x20 && c < 0x7f)
			el = (size_t)snprintf(e, sizeof(e), "%c", c);
		else
			el = (size_t)snprintf(e, sizeof(e), "\\x%02x", c);
		if (o + el >= len)
			break;
		memcpy(out + o, e, el);
		o += el;
	}
	out[o] = '\0';
	return out;
}

/* After a usage error: the usage's synopsis (its first line and the lines that go on
 * with options, '[' after the indent) and where the rest is, not the whole text. */
static void usage_hint(const char *cmd, const char *usage)
{
	for (const char *p = usage, *nl; *p; p = nl + 1) {
		if (p != usage && p[strspn(p, " ")] != '[')
			break;
		if (!(nl = strchr(p, '\n')))
			nl = p + strlen(p) - 1;
		fprintf(stderr, "%.*s\n", (int)(nl - p), p);
	}
	fprintf(stderr, "Try 'faststamp %s --help' for more.\n", cmd);
}

int fts_tool_usage_error(const char *cmd, const char *usage, const char *fmt, const char *arg)
{
	fprintf(stderr, "faststamp %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	usage_hint(cmd, usage);
	return 2;
}

int fts_tool_opt(struct fts_tool_opts *o, int argc, char **argv, int *i, const char **val)
{
	const char *a = argv[*i];
	int k = 0;

	*val = NULL;
	if (o->ended || a[0] != '-' || !a[1]) {
		*val = a;
		return FTS_OPT_ARG;
	}
	if (!strcmp(a, "--")) {
		o->ended = 1;
		return FTS_OPT_END;
	}
	if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
		fputs(o->usage, stdout);
		return FTS_OPT_HELP;
	}
	while (k < o->n && strcmp(a, o->names[k]))
		k++;
	if (k == o->n) {
		fts_tool_usage_error(o->cmd, o->usage, "unknown option '%s'", a);
		return FTS_OPT_BAD;
	}
	if (k < o->nvalued) {
		const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
		/* No option takes a negative number: a value that starts with '-' (but "-",
		 * standard input) is the next option, and this one's value was left out. */
		if (!v || (v[0] == '-' && v[1])) {
			fprintf(stderr, "faststamp %s: %s needs a value%s%s%s\n", o->cmd, a,
				v ? ", not the option '" : "", v ? v : "", v ? "'" : "");
			usage_hint(o->cmd, o->usage);
			return FTS_OPT_BAD;
		}
		if (o->seen & 1u << k) {
			fts_tool_usage_error(o->cmd, o->usage, "%s is given more than once", a);
			return FTS_OPT_BAD;
		}
		*val = argv[++*i];
	}
	o->seen |= 1u << k;
	return k;
}

int fts_tool_open_regular(const char *cmd, const char *path)
{
	struct stat st;
	const char *why = NULL;
	int fd;

	/* O_NONBLOCK: open() of a FIFO without a writer would wait for one. */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (S_ISDIR(st.st_mode))
		why = strerror(EISDIR);
	else if (!S_ISREG(st.st_mode))
		why = S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file"
		      : S_ISSOCK(st.st_mode) ? "a socket, not a regular file"
					      : "a device, not a regular file";
	else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		why = strerror(errno);
	if (!why)
		return fd;
	fprintf(stderr, "faststamp %s: %s: %s\n", cmd, path, why);
	if (fd >= 0)
		close(fd);
	return -1;
}

const char *const fts_tool_clock_arg[FTS_TOOL_NCLK] = {
	[FTS__CLK_REALTIME] = "realtime", [FTS__CLK_TAI] = "tai",
	[FTS__CLK_MONOTONIC] = "monotonic", [FTS__CLK_BOOTTIME] = "boottime",
	[FTS__CLK_RAW] = "raw",
};
const char *const fts_tool_clock_name[FTS_TOOL_NCLK] = {
	[FTS__CLK_REALTIME] = "CLOCK_REALTIME", [FTS__CLK_TAI] = "CLOCK_TAI",
	[FTS__CLK_MONOTONIC] = "CLOCK_MONOTONIC", [FTS__CLK_BOOTTIME] = "CLOCK_BOOTTIME",
	[FTS__CLK_RAW] = "CLOCK_MONOTONIC_RAW",
};
_Static_assert(FTS_TOOL_NCLK == FTS__NCLK, "the tool names every clock a file may hold");

char *fts_tool_file_clocks(const struct fts__fileinfo *fi, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	if (fi->clocks == 1u << FTS__CLK_REALTIME) {
		snprintf(buf, len, "%s alone", fts_tool_clock_name[FTS__CLK_REALTIME]);
		return buf;
	}
	for (int k = 0; k < FTS__NCLK && at < len; k++) {
		if (!(fi->clocks & 1u << k))
			continue;
		int w = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", fts_tool_clock_name[k]);
		at += w > 0 ? (size_t)w : 0;
	}
	return buf;
}

/* want: the clocks to build (bits 1 << k). */
static int load(const char *cmd, const char *path, unsigned want, struct fts_calib *out[FTS__NCLK],
		struct fts__fileinfo *fi)
{
	int fd, rc;

	if ((fd = fts_tool_open_regular(cmd, path)) < 0)
		return -1;
	rc = fts__histfile_load_clocks(fd, want, out, fi);
	close(fd);
	if (rc < 0)
		fprintf(stderr, "faststamp %s: %s: %s\n", cmd, path,
			rc == -EBADMSG   ? "not a history file, or a damaged one"
			: rc == -ENODATA ? "fewer than 2 samples (a record only started)"
					 : strerror(-rc));
	return rc < 0 ? -1 : 0;
}

int fts_tool_load_clocks(const char *cmd, const char *path, struct fts_calib *out[FTS_TOOL_NCLK],
			 struct fts__fileinfo *fi)
{
	return load(cmd, path, FTS__ALL_CLOCKS, out, fi);
}

struct fts_calib *fts_tool_load_clock(const char *cmd, const char *path, int k,
				      struct fts__fileinfo *fi)
{
	struct fts_calib *c[FTS__NCLK];
	struct fts__fileinfo mine;
	char held[128];

	if (!fi)
		fi = &mine;
	if (load(cmd, path, 1u << k, c, fi) < 0)
		return NULL;
	if (c[k])
		return c[k];
	/* formats 1 and 2, fts_calib_save's file (one history of no named clock), or a
	 * saved history of fewer clocks (the shared one's: CLOCK_REALTIME alone) */
	fprintf(stderr, "faststamp %s: %s: a history file of format %u%s: it holds %s, not %s\n",
		cmd, path, fi->version,
		!fi->plain || fi->version < 3 ? ""
		: fi->saved ? " with one history (fts_calib_save's), read as CLOCK_REALTIME's"
			    : " with one clock's samples, read as CLOCK_REALTIME's",
		fts_tool_file_clocks(fi, held, sizeof(held)), fts_tool_clock_name[k]);
	return NULL;
}

struct fts_calib *fts_tool_load_history(const char *cmd, const char *path,
					struct fts__fileinfo *fi)
{
	return fts_tool_load_clock(cmd, path, FTS__CLK_REALTIME, fi);
}

int fts_tool_utc(int64_t sec, char *day, size_t len)
{
	time_t t = (time_t)sec;
	struct tm tm;

	return gmtime_r(&t, &tm) && strftime(day, len, "%Y-%m-%dT%H:%M:%S", &tm) ? 0 : -1;
}
