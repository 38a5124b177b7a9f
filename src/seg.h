/* seg.h - evaluating one interval of a history: the conversion hot path, inline. */
#ifndef FTS__SEG_H
#define FTS__SEG_H

#include <errno.h>
#include <stdint.h>

#include "internal.h"

static inline __int128 fts__mulshift(uint64_t d, int64_t m, uint32_t shift)
{
	unsigned __int128 p = (unsigned __int128)d * (uint64_t)(m < 0 ? -(uint64_t)m : (uint64_t)m);
	if (shift)
		p = (p + ((unsigned __int128)1 << (shift - 1))) >> shift;
	/* Past 2^100 ns nothing fits an int64 anyway; saturating keeps sums from overflow. */
	if (p > ((unsigned __int128)1 << 100))
		p = (unsigned __int128)1 << 100;
	return m < 0 ? -(__int128)p : (__int128)p;
}

static inline __int128 fts__max128(__int128 a, __int128 b) { return a > b ? a : b; }
static inline __int128 fts__min128(__int128 a, __int128 b) { return a < b ? a : b; }

static inline int fts__seg_convert(const struct fts__seg *s, int where, uint64_t x,
				   int64_t *ns, int64_t *err)
{
	__int128 est, bound;

	if (where == 0 && !err && !s->step) {   /* the line alone */
		est = s->r0 + fts__mulshift(x - s->c0, s->mult, s->shift);
		bound = 0;
	} else if (where == 0) {
		uint64_t d1 = x - s->c0, d2 = s->c1 - x;
		uint64_t D1 = d1 < s->span ? d1 : s->span, D2 = d2 < s->span ? d2 : s->span;
		int64_t dn = s->mult - s->lo, up = s->hi - s->mult;
		__int128 lo_off = fts__min128(-fts__mulshift(D1, dn, s->shift) - s->e0,
					 -fts__mulshift(D2, up, s->shift) - s->e1);
		__int128 hi_off = fts__max128(fts__mulshift(D1, up, s->shift) + s->e0,
					 fts__mulshift(D2, dn, s->shift) + s->e1);
		__int128 off = s->step ? (lo_off + hi_off) / 2 : 0;

		est = s->r0 + fts__mulshift(d1, s->mult, s->shift) + off;
		bound = fts__max128(off - lo_off, hi_off - off) + 1; /* +1: rounding */
	} else if (!err) {
		uint64_t d = where > 0 ? x - s->c1 : s->c0 - x;
		__int128 moved = fts__mulshift(d, s->lo + (s->hi - s->lo) / 2, s->shift);
		est = where > 0 ? s->r1 + moved : s->r0 - moved;
		bound = 0;
	} else {
		/* Outside: carry the rate band on from the nearest end. */
		int64_t mid = s->lo + (s->hi - s->lo) / 2, half = (s->hi - s->lo + 1) / 2;
		uint64_t d = where > 0 ? x - s->c1 : s->c0 - x;
		__int128 moved = fts__mulshift(d, mid, s->shift);

		est = where > 0 ? s->r1 + moved : s->r0 - moved;
		bound = fts__mulshift(d, half, s->shift) + (where > 0 ? s->e1 : s->e0) + 1;
	}
	/* A bound past int64 says nothing; report it as a result that does not fit. */
	if (est > INT64_MAX || est < INT64_MIN || bound > INT64_MAX)
		return -ERANGE;
	*ns = (int64_t)est;
	if (err)
		*err = (int64_t)bound;
	return 0;
}


#endif /* FTS__SEG_H */
