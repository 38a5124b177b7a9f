/* seg.h - the read side of a history, inline: the conversion hot path. Readers take
 * the sequence count, look an interval up, copy it, and evaluate it; they write nothing
 * shared. calib.c is the write side. */
#ifndef FTS__SEG_H
#define FTS__SEG_H

#include <errno.h>
#include <stdint.h>

#include "internal.h"

struct knot;

struct fts_calib {
	/* Read by readers: one line, written only by the writer. */
	_Alignas(64) unsigned seq;
	size_t n;                /* knots held; intervals = n - 1 */
	uint64_t newest;         /* counter of the newest knot, 0 with fewer than two */
	struct fts__seg *segs;   /* cap - 1 entries, fixed at creation */
	size_t cap;              /* fixed at creation */
	/* Writer only. */
	_Alignas(64) long double tol;         /* rate tolerance, relative */
	uint64_t last_after;
	struct knot *knots;
};


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

/* The general case: any position, with or without the bound. */
static __attribute__((noinline, unused)) int fts__seg_eval(const struct fts__seg *s, int where,
							  uint64_t x, int64_t *ns, int64_t *err)
{
	__int128 est, bound;

	if (where == 0) {
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

/* Can interval s be evaluated by its line alone, in 64 bits? Not a step, rising, with
 * a shift of at least 1 and a span of reference times under 2^62 ns: the line then lies
 * between r0 and r1 (+1 for rounding) for any x inside and the shifted product fits. */
static inline int fts__seg_line_ok(const struct fts__seg *s)
{
	return !s->step && s->mult >= 0 && s->shift >= 1 && s->r1 >= s->r0 &&
	       (uint64_t)s->r1 - (uint64_t)s->r0 < (UINT64_C(1) << 62);
}

/* The line of s at x, c0 <= x <= c1, when fts__seg_line_ok(s): the product shifted by
 * shift - 1 fits 64 bits, and its last bit rounds. */
static inline int64_t fts__seg_line(const struct fts__seg *s, uint64_t x)
{
	unsigned __int128 p = (unsigned __int128)(x - s->c0) * (uint64_t)s->mult;
	uint64_t v = (uint64_t)(p >> ((s->shift - 1) & 63));
	return s->r0 + (int64_t)((v + 1) >> 1);
}

/* Convert x with interval s: where is inside (0), before c0 (-1) or after c1 (+1)
 * (extrapolation). err may be NULL (cheaper: no bound). -ERANGE when the result or the
 * bound overflows. The common case, the time alone inside an interval, is inline. */
static inline int fts__seg_convert(const struct fts__seg *s, int where, uint64_t x,
				   int64_t *ns, int64_t *err)
{
	if (!err && where == 0 && fts__seg_line_ok(s)) {
		*ns = fts__seg_line(s, x);
		return 0;
	}
	/* Just past the newest sample (converting at once): the band's middle rate. */
	if (!err && where > 0 && s->shift >= 1 && s->lo >= 0 && s->r1 < INT64_MAX / 2) {
		unsigned __int128 p = (unsigned __int128)(x - s->c1) *
				      (uint64_t)(s->lo + (s->hi - s->lo) / 2) >> ((s->shift - 1) & 63);
		if (p < ((unsigned __int128)1 << 62)) {
			*ns = s->r1 + (int64_t)(((uint64_t)p + 1) >> 1);
			return 0;
		}
	}
	return fts__seg_eval(s, where, x, ns, err);
}


/* The writer's side of the sequence count: an odd count while it writes. */
static inline void fts__calib_write_begin(struct fts_calib *c)
{
	FTS__ST(c->seq, c->seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void fts__calib_write_end(struct fts_calib *c)
{
	__atomic_store_n(&c->seq, c->seq + 1, __ATOMIC_RELEASE);
}

static inline unsigned fts__calib_read_begin(const struct fts_calib *c)
{
	unsigned s;
	while ((s = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE)) & 1)
		FTS__RELAX();
	return s;
}

static inline int fts__calib_read_retry(const struct fts_calib *c, unsigned seq)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return FTS__LD(c->seq) != seq;
}

static inline void fts__seg_load(const struct fts__seg *src, struct fts__seg *dst)
{
	dst->c0 = FTS__LD(src->c0);
	dst->c1 = FTS__LD(src->c1);
	dst->r0 = FTS__LD(src->r0);
	dst->r1 = FTS__LD(src->r1);
	dst->mult = FTS__LD(src->mult);
	dst->lo = FTS__LD(src->lo);
	dst->hi = FTS__LD(src->hi);
	dst->span = FTS__LD(src->span);
	dst->e0 = FTS__LD(src->e0);
	dst->e1 = FTS__LD(src->e1);
	dst->shift = FTS__LD(src->shift);
	dst->step = FTS__LD(src->step);
}

static inline int fts__calib_lookup(const struct fts_calib *c, uint64_t x, struct fts__seg *seg)
{
	size_t n = FTS__LD(c->n), lo, hi;

	if (n < 2 || n > c->cap) {
		*seg = (struct fts__seg){ .c0 = 1 };   /* well formed, matches nothing */
		return -ENODATA;
	}
	/* Recent stamps are the common case: try the newest interval first. */
	lo = n - 2;
	if (lo > 0 && x < FTS__LD(c->segs[lo].c0)) {
		/* The last interval whose start is <= x, or the first. */
		lo = 0;
		hi = n - 3;
		while (lo < hi) {
			size_t mid = lo + (hi - lo + 1) / 2;
			if (FTS__LD(c->segs[mid].c0) <= x)
				lo = mid;
			else
				hi = mid - 1;
		}
	}
	fts__seg_load(&c->segs[lo], seg);
	/* Torn reads are caught by the sequence check; keep the answer well formed. */
	if (x < seg->c0)
		return -1;
	return x > seg->c1 ? 1 : 0;
}

/* The interval for x, copied under the sequence count (a consistent copy); returns
 * fts__calib_lookup's where. */
static inline int fts__calib_find(const struct fts_calib *c, uint64_t x, struct fts__seg *seg)
{
	unsigned seq;
	int where;

	do {
		seq = fts__calib_read_begin(c);
		where = fts__calib_lookup(c, x, seg);
	} while (fts__calib_read_retry(c, seq));
	return where;
}

static inline uint64_t fts__calib_newest_counter(const struct fts_calib *c)
{
	return FTS__LD(c->newest);
}

#endif /* FTS__SEG_H */
