/* resolution.c - how finely the kernel's clocks move: rule 1's q.
 *
 * A clock computed from a coarse clocksource (acpi_pm counts at 3.58 MHz: 279 ns a
 * tick) reads the same value from one of its ticks to the next. A read returns what
 * the clock was at its last tick, up to one resolution before the read: bracketed by
 * the counter from b to a, the clock held the value read somewhere between b less a
 * resolution and a. The process clock starts every bracket that much earlier
 * (res_widen, clockobj.h), and rule 1 then holds as stated. Found once, at the first calibration,
 * from the reads themselves: on a coarse clock every difference between two reads is
 * a whole number of its ticks, on a fine one they spread. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "resolution.h"

int64_t fts__res_grid(const int64_t *d, size_t n)
{
	int64_t least = INT64_MAX;
	size_t rises = 0, still = 0;

	for (size_t i = 0; i < n; i++)
		if (d[i] == 0)
			still++;
		else if (d[i] > 0) {
			rises++;
			least = d[i] < least ? d[i] : least;
		}
	if (rises < FTS__RES_MIN_RISES)
		return 0;
	/* The coarsest grid first: the least rise is a whole number k of its steps. */
	for (int k = 1; (double)least / k >= FTS__RES_MIN_NS; k++) {
		double g = (double)least / k, sum_d = 0, sum_m = 0;
		long lo = -1, hi = -1;
		int fits = 1;

		/* the grid from every rise at once, each read to its nearest multiple: the
		 * least one alone is a ns off, which its multiples would carry */
		for (size_t i = 0; i < n; i++)
			if (d[i] > 0) {
				sum_d += (double)d[i];
				sum_m += round((double)d[i] / g);
			}
		g = sum_d / sum_m;
		for (size_t i = 0; fits && i < n; i++) {
			long m;
			if (d[i] <= 0)
				continue;
			m = lround((double)d[i] / g);
			/* each reading is rounded down to the ns: a rise is its steps, +- 1 ns,
			 * and the grid itself a fraction of a ns off */
			fits = m > 0 && fabs((double)d[i] - (double)m * g) <= 2;
			lo = lo < 0 || m < lo ? m : lo;
			hi = m > hi ? m : hi;
		}
		/* one multiple alone tells a grid only beside reads that found the clock
		 * still: else the reads may just have taken equal times */
		if (fits)
			return hi > lo || still ? (int64_t)ceil(g) : 0;
	}
	return 0;
}

int64_t fts__res_probe(uint64_t (*counter)(void *), int (*read)(void *, int64_t *), void *ctx,
		       uint64_t *ticks)
{
	int64_t r[FTS__RES_READS], c[FTS__RES_READS], d[FTS__RES_READS - 1], q, qc;
	double per_ns;

	*ticks = 0;
	for (int i = 0; i < FTS__RES_READS; i++) {
		/* 0 to 30 counter reads between clock reads, in a scrambled order, so
		 * that a coarse clock's rises span a few of its steps; the counter's
		 * rises come in the same units, which tells a grid of the waits' own */
		for (int n = i * 17 % 31; n > 0; n--)
			(void)counter(ctx);
		if (read(ctx, &r[i]) < 0)
			return 0;
		c[i] = (int64_t)counter(ctx);
	}
	if (r[FTS__RES_READS - 1] <= r[0] || c[FTS__RES_READS - 1] <= c[0])
		return 0;
	for (int i = 1; i < FTS__RES_READS; i++)
		d[i - 1] = r[i] - r[i - 1];
	q = fts__res_grid(d, FTS__RES_READS - 1);
	/* ticks a ns over the reads, 10 % up: the reads' own brackets blur it */
	per_ns = (double)(c[FTS__RES_READS - 1] - c[0]) / (double)(r[FTS__RES_READS - 1] - r[0]);
	for (int i = 1; i < FTS__RES_READS; i++)
		d[i - 1] = c[i] - c[i - 1];
	qc = fts__res_grid(d, FTS__RES_READS - 1);
	/* A counter that itself moves in steps as coarse (a hypervisor's TSC) gives the
	 * clock its steps: the brackets, read on it, hold them already. */
	if (q <= 0 || (double)q * per_ns <= (double)qc * 1.25 + 1)
		return 0;
	*ticks = (uint64_t)ceil((double)q * per_ns * 1.1) + 1;
	return q;
}
