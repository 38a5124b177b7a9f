/* daysim.h - long simulated clocks for the history: a path of the truth with a change
 * at every sample (rate, and sometimes a step), as many samples as wanted.
 *
 *  - daysim_ntp: an NTP-disciplined clock: 10 samples a second, the rate random-walking
 *    by up to 0.01 ppm a sample, brackets of up to 100 ticks a side.
 *  - daysim_harsh: samples 5-500 ms apart, the rate changing by up to +-20 ppm at one
 *    sample in eight, a dozen steps of 0.1-2 s either way between samples, one bracket
 *    in fifty up to 2000 ticks wide (else up to 100).
 *
 * The truth is piecewise linear: from point i on it runs at rate[i] ns per tick from
 * ref[i]; a step happens at a point between two samples. */
#ifndef FTS_TEST_DAYSIM_H
#define FTS_TEST_DAYSIM_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

struct daysim {
	size_t n, cap;              /* change points */
	uint64_t *at;               /* counter where point i takes effect */
	long double *ref, *rate;
	size_t nsamp;
	uint64_t *b, *a;            /* sample brackets */
	int64_t *r;                 /* readings */
	size_t nsteps;
	uint64_t steps[64];         /* counter of each step */
	uint64_t rng;
};

static inline uint64_t daysim_rand(struct daysim *d)
{
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return d->rng * 2685821657736338717ull;
}

/* Uniform in [0, 1). */
static inline long double daysim_u(struct daysim *d)
{
	return (long double)(daysim_rand(d) >> 11) / 9007199254740992.0L;
}

static inline long double daysim_truth_ld(const struct daysim *d, uint64_t x)
{
	size_t lo = 0, hi = d->n - 1;
	while (lo < hi) {   /* the last point at or before x */
		size_t mid = lo + (hi - lo + 1) / 2;
		if (d->at[mid] <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return d->ref[lo] + d->rate[lo] * ((long double)x - (long double)d->at[lo]);
}

/* What the reference read at counter x (whole ns, rounded down). */
static inline int64_t daysim_truth(const struct daysim *d, uint64_t x)
{
	return (int64_t)floorl(daysim_truth_ld(d, x));
}

static inline void daysim_point(struct daysim *d, uint64_t x, long double rate, long double step)
{
	long double ref = d->n ? daysim_truth_ld(d, x) : 1798761600e9L;
	d->at[d->n] = x;
	d->ref[d->n] = ref + step;
	d->rate[d->n] = rate;
	d->n++;
}

static inline void daysim_sample(struct daysim *d, uint64_t t, uint64_t w)
{
	d->b[d->nsamp] = t - (uint64_t)(daysim_u(d) * (long double)(w + 1));
	d->a[d->nsamp] = t + (uint64_t)(daysim_u(d) * (long double)(w + 1));
	d->r[d->nsamp] = daysim_truth(d, t);
	d->nsamp++;
}

static inline int daysim_alloc(struct daysim *d, size_t samples, uint64_t seed)
{
	*d = (struct daysim){ .cap = 2 * samples + 64, .rng = seed * 2654435761u + 1 };
	d->at = malloc(d->cap * sizeof(*d->at));
	d->ref = malloc(d->cap * sizeof(*d->ref));
	d->rate = malloc(d->cap * sizeof(*d->rate));
	d->b = malloc(samples * sizeof(*d->b));
	d->a = malloc(samples * sizeof(*d->a));
	d->r = malloc(samples * sizeof(*d->r));
	return d->at && d->ref && d->rate && d->b && d->a && d->r ? 0 : -1;
}

static inline void daysim_free(struct daysim *d)
{
	free(d->at);
	free(d->ref);
	free(d->rate);
	free(d->b);
	free(d->a);
	free(d->r);
}

#define DAYSIM_HZ 2.6L   /* counter ticks per ns */

/* An NTP-disciplined clock: n samples 100 ms apart. */
static inline int daysim_ntp(struct daysim *d, size_t n, uint64_t seed)
{
	long double ppm = 12.3;
	uint64_t t = 1000000000000ull;

	if (daysim_alloc(d, n, seed))
		return -1;
	for (size_t i = 0; i < n; i++) {
		daysim_point(d, t, (1 + ppm * 1e-6L) / DAYSIM_HZ, 0);
		daysim_sample(d, t, 100);
		ppm += (daysim_u(d) * 2 - 1) * 0.01L;
		t += (uint64_t)(100e6L * DAYSIM_HZ);
	}
	return 0;
}

/* A harsh clock: n samples 5-500 ms apart. */
static inline int daysim_harsh(struct daysim *d, size_t n, uint64_t seed)
{
	long double ppm = -7;
	uint64_t t = 1000000000000ull;
	size_t next_step = n / 13;

	if (daysim_alloc(d, n, seed))
		return -1;
	daysim_point(d, t, (1 + ppm * 1e-6L) / DAYSIM_HZ, 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t gap = (uint64_t)((5e6L + daysim_u(d) * 495e6L) * DAYSIM_HZ);
		if (i % 8 == 7) {   /* a new rate, at this sample */
			ppm += (daysim_u(d) * 2 - 1) * 20;
			daysim_point(d, t, (1 + ppm * 1e-6L) / DAYSIM_HZ, 0);
		}
		daysim_sample(d, t, i % 50 == 25 ? 2000 : 100);
		if (i == next_step && d->nsteps < 12) {   /* a step inside the next interval */
			long double size = (1e8L + daysim_u(d) * 1.9e9L) * (daysim_rand(d) & 1 ? 1 : -1);
			uint64_t at = t + 1 + (uint64_t)(daysim_u(d) * (long double)(gap - 2));
			daysim_point(d, at, (1 + ppm * 1e-6L) / DAYSIM_HZ, size);
			d->steps[d->nsteps++] = at;
			next_step += n / 13;
		}
		t += gap;
	}
	return 0;
}

#endif
