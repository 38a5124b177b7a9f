/* daysim.h - long simulated clocks for the history, recorded: the true clock of sim.h
 * with a change at every sample (rate, and sometimes a step), as many samples as
 * wanted, kept in arrays.
 *
 *  - daysim_ntp: an NTP-disciplined clock: 10 samples a second, the rate random-walking
 *    by up to 0.01 ppm a sample, brackets of up to 100 ticks a side.
 *  - daysim_harsh: samples 5-500 ms apart, the rate changing by up to +-20 ppm at one
 *    sample in eight, a dozen steps of 0.1-2 s either way between samples, one bracket
 *    in fifty up to 2000 ticks wide (else up to 100).
 *
 * A recorded sample draws its bracket from sim_u, not sim_sample's sim_uniform: the
 * history files in tests/data were written from these seeds, and must stay theirs. */
#ifndef FTS_TEST_DAYSIM_H
#define FTS_TEST_DAYSIM_H

#include <stdint.h>
#include <stdlib.h>

#include "sim.h"

struct daysim {
	struct sim s;               /* the truth, and the draws */
	size_t nsamp;
	uint64_t *b, *a;            /* sample brackets */
	int64_t *r;                 /* readings */
	size_t nsteps;
	uint64_t steps[64];         /* counter of each step */
};

#define DAYSIM_EPOCH 1798761600e9L   /* the reference at the first point, ns */
#define DAYSIM_HZ 2.6L               /* counter ticks per ns */

/* A change point at counter x: the first one starts the day at DAYSIM_EPOCH. */
static inline void daysim_point(struct daysim *d, uint64_t x, long double rate, long double step)
{
	if (d->s.n)
		sim_change(&d->s, x, rate, step);
	else
		sim_start(&d->s, x, DAYSIM_EPOCH + step, rate);
}

static inline void daysim_sample(struct daysim *d, uint64_t t, uint64_t w)
{
	d->b[d->nsamp] = t - (uint64_t)(sim_u(&d->s) * (long double)(w + 1));
	d->a[d->nsamp] = t + (uint64_t)(sim_u(&d->s) * (long double)(w + 1));
	d->r[d->nsamp] = sim_truth(&d->s, t);
	d->nsamp++;
}

static inline int daysim_alloc(struct daysim *d, size_t samples, uint64_t seed)
{
	*d = (struct daysim){ .nsamp = 0 };
	d->b = malloc(samples * sizeof(*d->b));
	d->a = malloc(samples * sizeof(*d->a));
	d->r = malloc(samples * sizeof(*d->r));
	return sim_alloc(&d->s, 2 * samples + 64, seed) == 0 && d->b && d->a && d->r ? 0 : -1;
}

static inline void daysim_free(struct daysim *d)
{
	sim_free(&d->s);
	free(d->b);
	free(d->a);
	free(d->r);
}

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
		ppm += (sim_u(&d->s) * 2 - 1) * 0.01L;
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
		uint64_t gap = (uint64_t)((5e6L + sim_u(&d->s) * 495e6L) * DAYSIM_HZ);
		if (i % 8 == 7) {   /* a new rate, at this sample */
			ppm += (sim_u(&d->s) * 2 - 1) * 20;
			daysim_point(d, t, (1 + ppm * 1e-6L) / DAYSIM_HZ, 0);
		}
		daysim_sample(d, t, i % 50 == 25 ? 2000 : 100);
		if (i == next_step && d->nsteps < 12) {   /* a step inside the next interval */
			long double size = (1e8L + sim_u(&d->s) * 1.9e9L) * (sim_rand(&d->s) & 1 ? 1 : -1);
			uint64_t at = t + 1 + (uint64_t)(sim_u(&d->s) * (long double)(gap - 2));
			daysim_point(d, at, (1 + ppm * 1e-6L) / DAYSIM_HZ, size);
			d->steps[d->nsteps++] = at;
			next_step += n / 13;
		}
		t += gap;
	}
	return 0;
}

#endif
