/* sim.h - the true clock of the deterministic tests: one model for all of them (the
 * short scenarios of test_calib_sim and test_rules, simclock.h's machine, and the long
 * recorded days of daysim.h, which the bench's history figures use too).
 *
 * The truth is piecewise linear in the counter: from each change point on, the
 * reference advances at its rate (ns per tick), and may jump by a step at the point.
 * Points come in counter order (a change at c is past every earlier one); the reference
 * reads whole ns (floor), like clock_gettime. Samples bracket the true reading between
 * two counter values, as a real sampler does. The draws are one xorshift64* sequence
 * per seed, so a seed gives the same clock, samples and stamps every run. */
#ifndef FTS_TEST_SIM_H
#define FTS_TEST_SIM_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The change points of a model sim_init starts; a change past its capacity is
 * dropped. */
#define SIM_MAX_CHANGES 4096

struct sim {
	size_t n, cap;          /* change points, and room for them */
	uint64_t *at;           /* counter where a change takes effect */
	long double *ref;       /* reference there, after the step */
	long double *rate;      /* ns per tick from there on */
	uint64_t rng;
};

/* Room for cap points, none yet, the draws seeded. 0, or -1 (out of memory): then
 * sim_free takes what was allocated. */
static inline int sim_alloc(struct sim *s, size_t cap, uint64_t seed)
{
	*s = (struct sim){ .cap = cap, .rng = seed * 2654435761u + 1 };
	s->at = malloc(cap * sizeof(*s->at));
	s->ref = malloc(cap * sizeof(*s->ref));
	s->rate = malloc(cap * sizeof(*s->rate));
	return s->at && s->ref && s->rate ? 0 : -1;
}

static inline void sim_free(struct sim *s)
{
	free(s->at);
	free(s->ref);
	free(s->rate);
	s->at = NULL;
	s->ref = s->rate = NULL;
	s->n = s->cap = 0;
}

/* The first point: reference ref0 at counter c0, rate ns per tick. */
static inline void sim_start(struct sim *s, uint64_t c0, long double ref0, long double rate)
{
	s->n = 1;
	s->at[0] = c0;
	s->ref[0] = ref0;
	s->rate[0] = rate;
}

/* Start a model of up to SIM_MAX_CHANGES points: reference ref0 at counter c0, rate ns
 * per tick. sim_free it when done. */
static inline void sim_init(struct sim *s, uint64_t c0, long double ref0, long double rate,
			    uint64_t seed)
{
	if (sim_alloc(s, SIM_MAX_CHANGES, seed) < 0) {
		perror("sim_init");   /* a test's fixture: nothing to test without it */
		exit(1);
	}
	sim_start(s, c0, ref0, rate);
}

static inline uint64_t sim_rand(struct sim *s)
{
	/* xorshift64*: deterministic per seed */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 2685821657736338717ull;
}

/* Uniform in [0, n]. */
static inline uint64_t sim_uniform(struct sim *s, uint64_t n)
{
	return n ? sim_rand(s) % (n + 1) : 0;
}

/* Uniform in [0, 1). */
static inline long double sim_u(struct sim *s)
{
	return (long double)(sim_rand(s) >> 11) / 9007199254740992.0L;
}

static inline long double sim_truth_ld(const struct sim *s, uint64_t c)
{
	size_t lo = 0, hi = s->n - 1;
	while (lo < hi) {   /* the last point at or before c (the first if none is) */
		size_t mid = lo + (hi - lo + 1) / 2;
		if (s->at[mid] <= c)
			lo = mid;
		else
			hi = mid - 1;
	}
	return s->ref[lo] + s->rate[lo] * ((long double)c - (long double)s->at[lo]);
}

/* What the reference clock reads at counter c. */
static inline int64_t sim_truth(const struct sim *s, uint64_t c)
{
	return (int64_t)floorl(sim_truth_ld(s, c));
}

/* From counter c on (c past every earlier change): new rate, and a jump of step ns. */
static inline void sim_change(struct sim *s, uint64_t c, long double rate, long double step)
{
	if (s->n == s->cap)
		return;
	s->ref[s->n] = sim_truth_ld(s, c) + step;
	s->at[s->n] = c;
	s->rate[s->n] = rate;
	s->n++;
}

/* A sample whose reference read happens at counter t, bracketed by up to w ticks on
 * each side. */
static inline void sim_sample(struct sim *s, uint64_t t, uint64_t w, uint64_t *before,
			      int64_t *ref, uint64_t *after)
{
	*before = t - sim_uniform(s, w);
	*after = t + sim_uniform(s, w);
	*ref = sim_truth(s, t);
}

#endif
