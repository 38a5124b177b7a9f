/* resolution.h - how finely the kernel's clocks move (resolution.c): rule 1's q.
 * Not installed. */
#ifndef FTS__RESOLUTION_H
#define FTS__RESOLUTION_H

#include <stddef.h>
#include <stdint.h>

/* Reads the probe takes, and the fewest rising differences that tell a grid. */
#define FTS__RES_READS 40
#define FTS__RES_MIN_RISES 16
/* A grid finer than this is not looked for: rule 1's whole-ns rounding and the
 * brackets' own width cover it. */
#define FTS__RES_MIN_NS 8

/* The grid, in ns rounded up, on which the n differences d[] between consecutive
 * reads of a clock lie: every rising one within 2 ns of a whole multiple of it, at
 * least two different multiples among them or a read that found the clock still (else
 * nothing tells a grid from reads that took equal times), the grid FTS__RES_MIN_NS or
 * coarser, and at least FTS__RES_MIN_RISES rising. The coarsest such grid (the safe
 * side: a multiple of the true one); 0 when there is none. A pure judgement. */
int64_t fts__res_grid(const int64_t *d, size_t n);

/* The resolution of a clock, found by reading it FTS__RES_READS times, waiting a
 * different while before each (so that reads of a fine clock spread over every value),
 * and judging the differences (fts__res_grid); the counter, read after each, the same
 * way. Returns the grid in ns, and *ticks the same in counter ticks, rounded up with a
 * margin for the rate measured over the reads; 0 and 0 when none was found, a read
 * failed, or the counter moves in steps as coarse (then the clock's steps are the
 * counter's, and a bracket read on it holds them). */
int64_t fts__res_probe(uint64_t (*counter)(void *), int (*read)(void *, int64_t *), void *ctx,
		       uint64_t *ticks);

#endif
