/* accuracy.c - how far a conversion is from the truth: each stamp stored between two
 * clock_gettime reads (a bracket) and converted, at once or after the warm-up; its
 * offset from the bracket's midpoint, the bracket's width, the bound it was given.
 *
 * Owns: struct acc and its figures, and the warm-up's bracketed stamps. May not: print
 * (output.c does) or time anything.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_int.h"
#include "tool.h"

int bench_acc_alloc(struct acc *a, const char *name, size_t n)
{
	a->name = name;
	a->off = calloc(n, sizeof(double));
	a->width = calloc(n, sizeof(double));
	a->bound = calloc(n, sizeof(double));
	return a->off && a->width && a->bound ? 0 : -1;
}

void bench_acc_free(struct acc *a)
{
	free(a->off);
	free(a->width);
	free(a->bound);
}

int bench_acc_add(struct acc *a, const struct fts__sbracket *b)
{
	int64_t ns, err, miss, mid = b->t0 + (b->t1 - b->t0) / 2;

	if (fts_convert(&b->s, &ns, &err) < 0)
		return -1;
	a->off[a->n] = (double)(ns - mid);
	a->width[a->n] = (double)(b->t1 - b->t0);
	a->bound[a->n] = (double)err;
	miss = fts__sbracket_miss(b, ns);
	a->inside += miss == 0;
	a->covered += miss <= err;
	a->n++;
	return 0;
}

void bench_acc_summary(struct acc *a)
{
	static const double q5[5] = { 0.01, 0.1, 0.5, 0.9, 0.99 };

	a->worst = 0;
	for (size_t i = 0; i < a->n; i++)
		if (fabs(a->off[i]) > a->worst)
			a->worst = fabs(a->off[i]);
	/* Quantiles sort in place, so off[i] and width[i] stop matching: the histograms
	 * need only each distribution. */
	a->width_p[0] = fts_tool_quantile_d(a->width, a->n, 0.5);
	a->width_p[1] = fts_tool_quantile_d(a->width, a->n, 0.9);
	a->width_p[2] = fts_tool_quantile_d(a->width, a->n, 0.99);
	for (int i = 0; i < 5; i++)
		a->off_p[i] = fts_tool_quantile_d(a->off, a->n, q5[i]);
	a->bound_p[0] = fts_tool_quantile_d(a->bound, a->n, 0.5);
	a->bound_p[1] = fts_tool_quantile_d(a->bound, a->n, 0.99);
}

/* Stamps stored over the warm-up, bracketed: the old stamps for the conversion loops
 * and the late-conversion accuracy round. */
int bench_warm_up(struct fts__sbracket *w, size_t n, int64_t span_ns)
{
	int64_t start = fts_tool_now(CLOCK_MONOTONIC);

	if (fts_clock_start() < 0) {
		perror("faststamp bench: calibration");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t due = start + span_ns * (int64_t)i / (int64_t)n;
		struct timespec ts = { due / 1000000000, due % 1000000000 };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		fts__sbracket_take(&w[i]);
	}
	return 0;
}
