/* health.h - judging a sample of the process clock against the samples before it: a
 * pure function of what it is given (sampler.c keeps the state, and acts on the
 * verdict). Not installed. */
#ifndef FTS__HEALTH_H
#define FTS__HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "bracket.h"
#include "clk.h"
#include "internal.h"

/* A sample of the process clock: CLOCK_REALTIME in a counter bracket (what the history
 * gets), each clock in a bracket of its own, then the health reads in one bracket. */
struct fts__psample {
	uint64_t b, a;          /* the counter around the realtime read */
	int64_t rt;
	struct fts__cbracket k[FTS__NCLK];   /* each clock in a bracket of its own */
	uint64_t hb, ha;        /* the counter around the health reads */
	struct fts__clocks clk;
	int cpu;                /* the CPU it was taken on, -1: not known */
};

/* What a sample is judged against. */
struct fts__health {
	struct fts__psample last;     /* the previous sample */
	struct fts__psample anchor;   /* the baseline of the counter's rate */
	int have_last;
	long double ticks_per_ns;     /* the counter against MONOTONIC_RAW; 0: not known */
	long double ticks_per_ns_err; /* its relative uncertainty */
};

/* What happened between the previous sample and this one. */
struct fts__seen {
	int step, suspend;      /* the wall clock stepped; the machine slept */
	int tai_step;           /* CLOCK_TAI stepped (a set, not a leap second) */
	int ran_on;             /* the counter ran through the sleep (RAW did not) */
	int64_t step_ns, suspend_ns;
	int64_t awake_ns;       /* MONOTONIC_RAW between the two: time awake */
	int64_t moved_ns;       /* watching offsets: the counter moved against the line of
				 * the previous sample by at most this (ns), too little to
				 * be a fault; 0: not measured */
};

enum fts__verdict {
	FTS__HEALTHY,           /* the counter kept its rate (or ran through a sleep) */
	FTS__FAULT_KEEP,        /* a counter fault; the sample still joins the history */
	FTS__FAULT_DROP,        /* the counter went back: the sample would collide */
};

/* Judge s against h (see sampler.c's top comment): the verdict, what happened since the
 * previous sample in *e (for a healthy one), and for a fault why, ending in cpu_note
 * (" on CPU n", or ""). watch_offsets: the kernel computes its clocksource from the
 * counter, which must then also keep its line against CLOCK_MONOTONIC_RAW to within
 * the brackets, the rate's uncertainty and OFFSET_*. The first sample is healthy. */
enum fts__verdict fts__health_judge(const struct fts__health *h, const struct fts__psample *s,
				    int watch_offsets, const char *cpu_note, struct fts__seen *e,
				    char *why, size_t len);
/* Learn from s, judged healthy (e what it saw): the rate's baseline and the counter's
 * rate against MONOTONIC_RAW over the longest baseline (moved past a sleep the counter
 * ran through). The caller then makes s the previous sample. */
void fts__health_learn(struct fts__health *h, const struct fts__psample *s,
		       const struct fts__seen *e);

#endif /* FTS__HEALTH_H */
