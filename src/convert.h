/* convert.h - convert.c's interface beyond the public calls: rule 12's fresh line, which
 * clock.c makes and drops. Not installed. */
#ifndef FTS__CONVERT_H
#define FTS__CONVERT_H

#include <stdint.h>

#include "internal.h"

struct fts__line;

/* Rule 12's line for counter values from read->c0 on: the bridge (rule 11) between the
 * tail and the clock read *read at the read's middle, carried on at the rate of the
 * segment rate (NULL: the tail's), its bound growing by the tail's band around it,
 * plus skew_ns; epoch: the source's timekeeping epoch read before the read; gen:
 * fts__fresh_gen() before the state the line was made from was looked at; chain_end:
 * the last counter value a line renewed from this one may bridge from (0: FRESH_CHAIN_NS
 * after the tail's key). */
void fts__fresh_publish(int k, const struct fts__line *tail, const struct fts__line *rate,
			const struct fts__line *read, int64_t epoch, int64_t skew_ns, unsigned gen,
			uint64_t chain_end);
/* Drop the fresh line: the history, the source, a fault or the skew changed. */
void fts__fresh_drop(void);
unsigned fts__fresh_gen(void);

#endif /* FTS__CONVERT_H */
