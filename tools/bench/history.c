/* history.c - the calibration history (struct fts_calib) on a simulated day: the
 * clock model of the tests (tests/daysim.h), an NTP-disciplined day at 10 samples a
 * second (an hour with --quick). Its memory from the resident set, its adds over the
 * whole day and one by one, and a reader's latency while a writer adds on another CPU.
 * Its conversions are timed in the cost rounds with the rest (ops.c's calib_ rows).
 *
 * Owns: bench_hist (the day, the history, the counters the calib_ loops read, the
 * latency figures). May not: print, or touch the process clock's history.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_int.h"
#include "tool.h"

struct bench_hist bench_hist;
static struct bench_hist *const H = &bench_hist;

static void lat_add(struct lat *l, int64_t ns)
{
	uint64_t v = ns > 0 ? (uint64_t)ns : 0;
	unsigned b, e;

	if (v < LAT_EXACT) {
		b = (unsigned)v;
	} else {
		e = 63u - (unsigned)__builtin_clzll(v);   /* >= 10 */
		b = LAT_EXACT + (e - 10) * LAT_SUB + (unsigned)((v >> (e - 6)) & (LAT_SUB - 1));
	}
	l->bin[b]++;
	l->n++;
	l->nlong += v > LAT_LONG;
	if ((int64_t)v > l->max)
		l->max = (int64_t)v;
}

/* The q-quantile: the lower edge of its bin. */
static double lat_q(const struct lat *l, double q)
{
	uint64_t rank, seen = 0;

	if (!l->n)
		return NAN;
	rank = (uint64_t)(q * (double)(l->n - 1) + 0.5);
	for (unsigned b = 0; b < LAT_BINS; b++) {
		seen += l->bin[b];
		if (seen > rank) {
			unsigned e = (b - LAT_EXACT) / LAT_SUB + 10;
			return b < LAT_EXACT ? (double)b
					     : (double)((uint64_t)(LAT_SUB + (b - LAT_EXACT) % LAT_SUB) << (e - 6));
		}
	}
	return (double)l->max;
}

static void lat_summary(struct lat *l)
{
	l->p50 = lat_q(l, 0.5);
	l->p99 = lat_q(l, 0.99);
	l->p999 = lat_q(l, 0.999);
}

/* Resident bytes of this process, -1 if /proc says nothing. */
static int64_t rss_bytes(void)
{
	long size, rss;
	FILE *f = fopen("/proc/self/statm", "r");
	int got;

	if (!f)
		return -1;
	got = fscanf(f, "%ld %ld", &size, &rss);
	fclose(f);
	return got == 2 ? (int64_t)rss * sysconf(_SC_PAGESIZE) : -1;
}

/* Are anonymous mappings given huge pages unasked? Then resident bytes grow 2 MiB at a
 * time. */
static int thp_always(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[always]") != NULL;
}

static uint64_t in_span(uint64_t lo, uint64_t hi, uint32_t frac)
{
	return lo + (uint64_t)(((unsigned __int128)(hi - lo) * frac) >> 32);
}

/* One word per cache line of bytes, each holding the index of the next line of a
 * random cycle through them all. */
static int chase_build(size_t bytes)
{
	size_t lines = bytes / 64 > 64 ? bytes / 64 : 64, *perm = malloc(lines * sizeof(*perm));

	H->chase = malloc(lines * 64);
	if (!perm || !H->chase) {
		free(perm);
		return -1;
	}
	for (size_t i = 0; i < lines; i++)
		perm[i] = i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = (size_t)(bench_rand() % (i + 1)), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		H->chase[perm[i] * 8] = perm[(i + 1) % lines] * 8;
	H->chase_at = perm[0] * 8;
	free(perm);
	return 0;
}

/* The simulated clock (10 samples a second, an hour with quick, else a day) and its
 * history with the default options, its adds untimed: what they cost in all, and the
 * memory they took. Then the stamps the conversion rounds cycle through. Returns 0, or
 * -1 with a message. */
int bench_hist_day(int quick)
{
	const struct daysim *d = &H->d;
	size_t n;
	int64_t rss0, rss_half = -1, rss1, t0, t1;
	size_t knots_half = 0;

	H->hours = quick ? 1 : 24;
	n = H->samples = (size_t)H->hours * 36000;   /* 10 a second */
	H->nday = quick ? (size_t)1 << 16 : (size_t)1 << 20;   /* 0.5 or 8 MiB of stamps */
	H->day = malloc(H->nday * sizeof(*H->day));
	H->built = 1;   /* daysim_free takes what a failed daysim_ntp left */
	if (!H->day || daysim_ntp(&H->d, n, 1) < 0) {
		perror("faststamp bench: the simulated day");
		return -1;
	}
	/* Nothing else allocates between the reads: the growth is the history's, its fixed
	 * part (the writer's state) included; the second half's growth is per knot alone. */
	rss0 = rss_bytes();
	H->c = fts_calib_new();
	if (!H->c) {
		perror("faststamp bench: fts_calib_new");
		return -1;
	}
	for (int half = 0; half < 2; half++) {
		size_t from = half ? n / 2 : 0, to = half ? n : n / 2;
		t0 = fts_tool_now(CLOCK_MONOTONIC);
		for (size_t i = from; i < to; i++)
			if (fts_calib_add(H->c, d->b[i], d->r[i], d->a[i]) < 0) {
				fprintf(stderr, "faststamp bench: fts_calib_add, sample %zu of the simulated day: %s\n",
					i, strerror(errno));
				return -1;
			}
		t1 = fts_tool_now(CLOCK_MONOTONIC);
		H->add_s += (double)(t1 - t0) / 1e9;
		if (!half) {
			rss_half = rss_bytes();
			knots_half = fts_calib_count(H->c);
		}
	}
	rss1 = rss_bytes();
	H->rss = rss0 >= 0 && rss1 >= 0 ? rss1 - rss0 : -1;
	H->thp_always = thp_always();
	H->knots = fts_calib_count(H->c);
	H->rss_marginal = rss_half >= 0 && rss1 >= 0 && H->knots > knots_half
		? (double)(rss1 - rss_half) / (double)(H->knots - knots_half) : NAN;
	H->add_ns = H->add_s * 1e9 / (double)n;

	for (size_t i = 0; i < H->nday; i++)
		H->day[i] = in_span(d->b[0], d->a[n - 1], (uint32_t)(bench_rand() >> 32));
	for (size_t i = 0; i < NREC; i++)   /* the last 10 samples: one second */
		H->last[i] = in_span(d->b[n - 11], d->a[n - 1], (uint32_t)(bench_rand() >> 32));
	if (chase_build(H->rss > 0 ? (size_t)H->rss : H->knots * 40) < 0) {
		perror("faststamp bench: the control's memory");
		return -1;
	}
	for (size_t i = 0; i < bench_nops; i++)
		if (bench_ops[i].group == BENCH_HISTORY)
			bench_ops[i].avail = 1;
	return 0;
}

/* The same adds on a second history, each timed alone: the worst one. */
int bench_hist_adds(void)
{
	const struct daysim *d = &H->d;
	struct fts_calib *c = fts_calib_new();

	if (!c) {
		perror("faststamp bench: fts_calib_new");
		return -1;
	}
	for (size_t i = 0; i < d->nsamp; i++) {
		fast_timestamp_t t0, t1;
		int rc;
		store_fast_timestamp(&t0);
		rc = fts_calib_add(c, d->b[i], d->r[i], d->a[i]);
		store_fast_timestamp(&t1);
		if (rc < 0) {
			fprintf(stderr, "faststamp bench: fts_calib_add, sample %zu of the simulated day: %s\n",
				i, strerror(errno));
			fts_calib_free(c);
			return -1;
		}
		lat_add(&H->add, bench_stamp_ns(&t0, &t1));
	}
	lat_summary(&H->add);
	fts_calib_free(c);
	return 0;
}

struct hwriter {
	struct fts_calib *c;
	const struct daysim *d;
	int cpu, err;
	size_t added;      /* samples in c: atomic, the reader's newest */
	int done;          /* atomic */
	struct rusage ru;  /* the writer thread's, over its adds */
	int64_t ns;        /* their time */
};

/* What the calling thread's rusage gained since *ru0 (page faults, context switches). */
static void ru_since(const struct rusage *ru0, struct rusage *d)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	d->ru_minflt = ru.ru_minflt - ru0->ru_minflt;
	d->ru_majflt = ru.ru_majflt - ru0->ru_majflt;
	d->ru_nvcsw = ru.ru_nvcsw - ru0->ru_nvcsw;
	d->ru_nivcsw = ru.ru_nivcsw - ru0->ru_nivcsw;
}

static void *hist_writer(void *arg)
{
	struct hwriter *w = arg;
	struct rusage ru0;
	int64_t t0;

	fts_tool_pin(w->cpu);
	getrusage(RUSAGE_THREAD, &ru0);
	t0 = fts_tool_now(CLOCK_MONOTONIC);
	for (size_t i = 0; i < w->d->nsamp; i++) {
		if (fts_calib_add(w->c, w->d->b[i], w->d->r[i], w->d->a[i]) < 0) {
			w->err = errno;
			break;
		}
		__atomic_store_n(&w->added, i + 1, __ATOMIC_RELEASE);
	}
	w->ns = fts_tool_now(CLOCK_MONOTONIC) - t0;
	ru_since(&ru0, &w->ru);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Reader samples start once the history has this many, so the newest interval has
 * neighbours on both sides. */
#define READ_FROM 12

/* Timed conversions, one by one, of a stamp in the newest interval (which every add
 * publishes again) and of a random one in all that was added, in turn: while the writer
 * runs (w->done unset), or n of them. The bracket is two ordered stores. Returns the
 * conversions, or 0 with a message when one failed. */
static uint64_t read_loop(struct hwriter *w, uint64_t n, struct lat l[2])
{
	const struct daysim *d = w->d;
	uint64_t i = 0;

	while (n ? i < n : !__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
		fast_timestamp_t t0, t1;
		size_t k = __atomic_load_n(&w->added, __ATOMIC_ACQUIRE);
		uint64_t x;
		int64_t ns, err;
		int rc;

		if (k < READ_FROM)
			continue;
		x = i & 1 ? in_span(d->b[0], d->a[k - 1], (uint32_t)(bench_rand() >> 32)) : d->a[k - 2];
		store_fast_timestamp(&t0);
		rc = fts_calib_convert(w->c, x, &ns, &err);
		store_fast_timestamp(&t1);
		if (rc < 0) {
			fprintf(stderr, "faststamp bench: fts_calib_convert(%llu) with %zu samples: %s\n",
				(unsigned long long)x, k, strerror(errno));
			return 0;
		}
		bench_sink = ns + err;
		lat_add(&l[i & 1], bench_stamp_ns(&t0, &t1));
		i++;
	}
	return i;
}

/* A reader converting in a loop on one CPU while a writer adds the day on another at
 * full speed; then the reader alone on the finished history, as many times; then the
 * bracket alone. Returns 0 (H->readers says whether it ran, H->readers_why why not),
 * or -1 with a message. */
int bench_hist_readers(void)
{
	cpu_set_t saved;
	struct rusage ru0;
	struct hwriter w = { .d = &H->d };
	pthread_t t;
	uint64_t n, m;
	int a = -1, b = -1, rc = -1;

	if (bench_two_cpus(&a, &b) < 0) {
		snprintf(H->readers_why, sizeof(H->readers_why), "only one CPU available");
		return 0;
	}
	w.c = fts_calib_new();
	if (!w.c) {
		perror("faststamp bench: fts_calib_new");
		return -1;
	}
	sched_getaffinity(0, sizeof(saved), &saved);
	w.cpu = b;
	if (fts_tool_pin(a) < 0 || pthread_create(&t, NULL, hist_writer, &w) != 0) {
		snprintf(H->readers_why, sizeof(H->readers_why), "cannot pin to CPU %d or start a thread", a);
		sched_setaffinity(0, sizeof(saved), &saved);
		fts_calib_free(w.c);
		return 0;
	}
	getrusage(RUSAGE_THREAD, &ru0);
	n = read_loop(&w, 0, H->busy);
	ru_since(&ru0, &H->ru_busy);
	pthread_join(t, NULL);
	H->ru_writer = w.ru;
	H->busy_add_ns = (double)w.ns / (double)H->d.nsamp;
	if (w.err) {
		fprintf(stderr, "faststamp bench: fts_calib_add in the writer thread: %s\n",
			strerror(w.err));
		goto out;
	}
	getrusage(RUSAGE_THREAD, &ru0);
	if (!n || !read_loop(&w, n, H->alone))
		goto out;
	ru_since(&ru0, &H->ru_alone);
	for (m = 0; m < n; m++) {
		fast_timestamp_t t0, t1;
		store_fast_timestamp(&t0);
		store_fast_timestamp(&t1);
		lat_add(&H->bracket, bench_stamp_ns(&t0, &t1));
	}
	for (int k = 0; k < 2; k++) {
		lat_summary(&H->busy[k]);
		lat_summary(&H->alone[k]);
	}
	lat_summary(&H->bracket);
	snprintf(H->readers_why, sizeof(H->readers_why), "reader on CPU %d, writer on CPU %d", a, b);
	H->readers = 1;
	rc = 0;
out:
	sched_setaffinity(0, sizeof(saved), &saved);
	fts_calib_free(w.c);
	return rc;
}

/* The simulated clock's arrays: not needed once the history figures are taken. */
void bench_hist_drop_sim(void)
{
	if (H->built)
		daysim_free(&H->d);
	H->built = 0;
}

void bench_hist_free(void)
{
	bench_hist_drop_sim();
	fts_calib_free(H->c);
	H->c = NULL;
	free(H->day);
	H->day = NULL;
	free(H->chase);
	H->chase = NULL;
}
