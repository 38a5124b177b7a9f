/* warp.h - the warp test (warp.c): the counter across CPUs. Not installed. */
#ifndef FTS__WARP_H
#define FTS__WARP_H

#include <sched.h>
#include <stdint.h>

struct fts__warp {
	int cpus;             /* CPUs of the set taken part (1: nothing to compare) */
	int pairs;            /* pairs measured: the first CPU with each other one */
	uint64_t warp;        /* ticks: the largest backward step seen across CPUs, 0: none */
	int worst_cpu;        /* the CPU it was seen with, -1: none */
	uint64_t spread;      /* ticks: every CPU's offset from the first lies within this,
			       * as far as the hand-overs can tell (their latency, or more) */
	uint64_t rtt;         /* ticks: the slowest pair's quickest hand-over there and back;
			       * an offset is seen as a warp once it is larger than its
			       * share of this (the test's resolution) */
	int64_t cost_ns;      /* how long the test took */
};

/* Run the warp test with read (an ordered counter read, called on pinned threads
 * with ctx) over the CPUs in cpus. CPUs a thread cannot be pinned to are left out.
 * A pair takes 50 ms at most where it can hand over 16 times by then, 1 s where it
 * cannot (a loaded machine). 0; -EAGAIN when a pair could not hand over 16 times in
 * 1 s (its vCPUs kept being preempted); or a negative errno from pthread_create. */
int fts__warp_measure(uint64_t (*read)(void *), void *ctx, const cpu_set_t *cpus,
		      struct fts__warp *w);

/* The CPUs this process may run on: the main thread's and the calling thread's. */
void fts__warp_cpus_allowed(cpu_set_t *set);

#endif
