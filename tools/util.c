/* util.c - small helpers for the subcommands. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "histfile.h"
#include "tool.h"

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

	if (!s || !*s || *s == '-' || *s == '+')
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

	if (!s || !*s)
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

int fts_tool_usage_error(const char *cmd, const char *usage, const char *fmt, const char *arg)
{
	fprintf(stderr, "faststamp %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage);
	return 2;
}

int fts_tool_opt(struct fts_tool_opts *o, int argc, char **argv, int *i, const char **val)
{
	const char *a = argv[*i];
	int k = 0;

	*val = NULL;
	if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
		fputs(o->usage, stdout);
		return FTS_OPT_HELP;
	}
	if (a[0] != '-' || !a[1]) {
		*val = a;
		return FTS_OPT_ARG;
	}
	while (k < o->n && strcmp(a, o->names[k]))
		k++;
	if (k == o->n) {
		fts_tool_usage_error(o->cmd, o->usage, "unknown option '%s'", a);
		return FTS_OPT_BAD;
	}
	if (k < o->nvalued) {
		if (*i + 1 >= argc) {
			fts_tool_usage_error(o->cmd, o->usage, "%s needs a value", a);
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

struct fts_calib *fts_tool_load_history(const char *cmd, const char *path,
					struct fts__fileinfo *fi)
{
	struct fts_calib *c;
	int fd, err;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "faststamp %s: %s: %s\n", cmd, path, strerror(errno));
		return NULL;
	}
	c = fts__load(fd, fi, &err);
	close(fd);
	if (!c)
		fprintf(stderr, "faststamp %s: %s: %s\n", cmd, path,
			err == EBADMSG   ? "not a history file, or a damaged one"
			: err == ENODATA ? "fewer than 2 samples (a record only started)"
					 : strerror(err));
	return c;
}

int fts_tool_utc(int64_t sec, char *day, size_t len)
{
	time_t t = (time_t)sec;
	struct tm tm;

	return gmtime_r(&t, &tm) && strftime(day, len, "%Y-%m-%dT%H:%M:%S", &tm) ? 0 : -1;
}
