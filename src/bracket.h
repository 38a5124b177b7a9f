/* bracket.h - the two bracketed reads faststamp is built on and judged by. Not installed.
 *
 * A counter bracket is one clock read between two counter reads; of a few tries the
 * narrowest is kept, since its middle is then nearest the clock read. The library
 * calibrates with it (samples, the frequency measurement).
 *
 * A stamp bracket is one stamp between two CLOCK_REALTIME reads: the truth lies in
 * [t0, t1], so a conversion is judged by its distance from that interval and a bound by
 * whether it reaches it. The tools and the tests measure accuracy with it.
 */
#ifndef FTS__BRACKET_H
#define FTS__BRACKET_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "faststamp.h"

struct fts__cbracket {
	uint64_t b, a;           /* the counter before and after */
	int64_t ns;              /* the clock between */
};

/* The narrowest of `tries` brackets of clock() by counter(), both given ctx. 0; the
 * clock's negative errno when no try read it; -EAGAIN when the counter went back in
 * every try. */
static inline int fts__cbracket_read(uint64_t (*counter)(void *), int (*clock)(void *, int64_t *),
				     void *ctx, int tries, struct fts__cbracket *out)
{
	int got = 0, rc = -EAGAIN;

	for (int i = 0; i < tries; i++) {
		uint64_t b = counter(ctx), a;
		int64_t ns;
		rc = clock(ctx, &ns);
		a = counter(ctx);
		if (rc < 0 || a < b)
			continue;
		if (!got || a - b < out->a - out->b) {
			out->b = b;
			out->a = a;
			out->ns = ns;
			got = 1;
		}
	}
	return got ? 0 : rc < 0 ? rc : -EAGAIN;
}

struct fts__sbracket {
	int64_t t0, t1;          /* CLOCK_REALTIME before and after, ns */
	fast_timestamp_t s;
};

static inline int64_t fts__realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void fts__sbracket_take(struct fts__sbracket *b)
{
	b->t0 = fts__realtime_ns();
	store_fast_timestamp(&b->s);
	b->t1 = fts__realtime_ns();
}

/* How far ns lies outside [t0, t1]: 0 inside. A bound err is honest when this is at
 * most err. */
static inline int64_t fts__sbracket_miss(const struct fts__sbracket *b, int64_t ns)
{
	return ns < b->t0 ? b->t0 - ns : ns > b->t1 ? ns - b->t1 : 0;
}

#endif
