/* sim.h - a simulated counter and reference clock for deterministic tests.
 *
 * The truth is piecewise linear in the counter: from each change point on, the
 * reference advances at its rate (ns per tick), and may jump by a step at the point.
 * Samples bracket the true reading between two counter values, as a real sampler
 * does; the reference reads whole ns (floor), like clock_gettime. */
#ifndef FTS_TEST_SIM_H
#define FTS_TEST_SIM_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define SIM_MAX_CHANGES 4096

struct sim {
	size_t n;
	uint64_t at[SIM_MAX_CHANGES];      /* counter where a change takes effect */
	long double ref[SIM_MAX_CHANGES];  /* reference there, after the step */
	long double rate[SIM_MAX_CHANGES]; /* ns per tick from there on */
	uint64_t rng;
};

/* Start: reference ref0 at counter c0, rate ns per tick. */
static inline void sim_init(struct sim *s, uint64_t c0, long double ref0, long double rate,
			    uint64_t seed)
{
	s->n = 1;
	s->at[0] = c0;
	s->ref[0] = ref0;
	s->rate[0] = rate;
	s->rng = seed * 2654435761u + 1;
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

static inline long double sim_truth_ld(const struct sim *s, uint64_t c)
{
	size_t k = s->n - 1;
	while (k > 0 && s->at[k] > c)
		k--;
	return s->ref[k] + s->rate[k] * ((long double)c - (long double)s->at[k]);
}

/* What the reference clock reads at counter c. */
static inline int64_t sim_truth(const struct sim *s, uint64_t c)
{
	return (int64_t)floorl(sim_truth_ld(s, c));
}

/* From counter c on (c past every earlier change): new rate, and a jump of step ns. */
static inline void sim_change(struct sim *s, uint64_t c, long double rate, long double step)
{
	if (s->n == SIM_MAX_CHANGES)
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
