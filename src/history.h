/* history.h - a history's published form, and its read side inline (the conversion
 * hot path). calib.c estimates and writes; readers only read, under a sequence count,
 * and write nothing shared.
 *
 * The history is a list of segments, each a line with a bound: for a counter value x
 * from the segment's key up to the next key, the reference read within err of
 * r0 + (x - key) * mult / 2^shift. Keys and segments sit in chunks of
 * FTS__CHUNK_RECS; a directory lists the chunks in order. Before the first key and
 * after the newest sample, head and tail carry a line on at a band's middle rate, the
 * bound growing by half its width. Everything is found by offsets from the history's
 * memory (the directory and a pool of chunks): the same layout can be read from a
 * file mapped into another process, where every index and count is checked. Not
 * installed. */
#ifndef FTS__HISTORY_H
#define FTS__HISTORY_H

#include <errno.h>
#include <stdint.h>

#include "internal.h"

#define FTS__CHUNK_RECS 256

#define FTS__SEG_STEP 1u     /* the segment holds a step (rule 7) */
#define FTS__SEG_FAST 2u     /* rising, and its line fits 64 bits over its whole span */

/* One segment: 32 bytes. */
struct fts__rec {
	int64_t r0;          /* reference ns at the key */
	int64_t mult;        /* ns per tick, fixed point */
	uint64_t err;        /* bound anywhere in the segment, ns */
	uint32_t shift;      /* mult's binary point */
	uint32_t flags;      /* FTS__SEG_* */
};

struct fts__chunk {
	uint64_t key[FTS__CHUNK_RECS];     /* counter where each segment starts, rising */
	struct fts__rec rec[FTS__CHUNK_RECS];
};

struct fts__dirent {
	uint64_t first;      /* key[0] of the chunk */
	uint32_t chunk;      /* index in the pool */
	uint32_t count;      /* segments in it, 1..FTS__CHUNK_RECS */
};

/* A line carried on outside the history: est = r0 + (x - key) * mult / 2^shift,
 * bound err + |x - key| * grow / 2^shift. */
struct fts__end {
	uint64_t key;
	struct fts__rec rec;
	int64_t grow;
};

struct fts__writer;

struct fts_calib {
	/* Read by readers, written by the writer under seq. */
	_Alignas(64) unsigned seq;
	uint32_t nchunks;             /* directory entries in use */
	uint64_t newest;              /* counter of the newest sample; 0 with fewer than two */
	struct fts__end head, tail;
	/* Fixed at creation. */
	struct fts__dirent *dir;      /* dircap entries */
	char *pool;                   /* dircap chunks */
	uint32_t dircap;
	/* Writer only. */
	struct fts__writer *w;
};

/* What a reader copies: the line for a counter value, and where it applies. */
struct fts__line {
	uint64_t c0, c1;     /* inside: the segment spans [c0, c1]; outside: c0 = c1 = the end */
	int64_t r0, mult, grow;
	uint64_t err;
	uint32_t shift, flags;
};

static inline struct fts__chunk *fts__chunk_at(const struct fts_calib *c, uint32_t k)
{
	return (struct fts__chunk *)(void *)(c->pool + (size_t)k * sizeof(struct fts__chunk));
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

static inline void fts__rec_load(const struct fts__rec *src, struct fts__line *l)
{
	l->r0 = FTS__LD(src->r0);
	l->mult = FTS__LD(src->mult);
	l->err = FTS__LD(src->err);
	l->shift = FTS__LD(src->shift);
	l->flags = FTS__LD(src->flags);
}

static inline void fts__end_load(const struct fts__end *e, struct fts__line *l)
{
	l->c0 = l->c1 = FTS__LD(e->key);
	fts__rec_load(&e->rec, l);
	l->grow = FTS__LD(e->grow);
}

/* The last index in keys[0..n) whose key is <= x (keys[0] <= x). */
static inline uint32_t fts__search(const uint64_t *keys, uint32_t n, uint64_t x, size_t stride)
{
	uint32_t lo = 0, hi = n - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (FTS__LD(*(const uint64_t *)(const void *)((const char *)keys + mid * stride)) <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Look x up without the sequence count: the caller retries. Every index and count is
 * checked, so a torn or hostile copy gives a wrong answer, never a wild read.
 * -ENODATA (no segment), -1 (before the first key), 1 (after the newest sample), or
 * 0 (inside), with the line in l. */
static inline int fts__calib_lookup(const struct fts_calib *c, uint64_t x, struct fts__line *l)
{
	uint32_t n = FTS__LD(c->nchunks), d, m, i;
	const struct fts__chunk *ch;
	struct fts__dirent e;

	if (n == 0 || n > c->dircap) {
		*l = (struct fts__line){ .c0 = 1 };   /* well formed, matches nothing */
		return -ENODATA;
	}
	if (x < FTS__LD(c->dir[0].first)) {
		fts__end_load(&c->head, l);
		return -1;
	}
	if (x > FTS__LD(c->newest)) {
		fts__end_load(&c->tail, l);
		return 1;
	}
	/* Recent stamps are the common case: the last chunk first. */
	d = n - 1;
	if (x < FTS__LD(c->dir[d].first))
		d = fts__search(&c->dir[0].first, n - 1, x, sizeof(struct fts__dirent));
	e.chunk = FTS__LD(c->dir[d].chunk);
	e.count = FTS__LD(c->dir[d].count);
	if (e.chunk >= c->dircap || e.count == 0 || e.count > FTS__CHUNK_RECS) {
		*l = (struct fts__line){ .c0 = 1 };
		return -ENODATA;
	}
	ch = fts__chunk_at(c, e.chunk);
	m = e.count;
	i = x >= FTS__LD(ch->key[m - 1]) ? m - 1 : fts__search(ch->key, m, x, sizeof(uint64_t));
	l->c0 = FTS__LD(ch->key[i]);
	if (i + 1 < m)
		l->c1 = FTS__LD(ch->key[i + 1]);
	else if (d + 1 < n)
		l->c1 = FTS__LD(c->dir[d + 1].first);
	else
		l->c1 = FTS__LD(c->newest);
	fts__rec_load(&ch->rec[i], l);
	l->grow = 0;
	return 0;
}

/* The line for x, copied under the sequence count (a consistent copy). */
static inline int fts__calib_find(const struct fts_calib *c, uint64_t x, struct fts__line *l)
{
	unsigned seq;
	int where;

	do {
		seq = fts__calib_read_begin(c);
		where = fts__calib_lookup(c, x, l);
	} while (fts__calib_read_retry(c, seq));
	return where;
}

static inline uint64_t fts__calib_newest_counter(const struct fts_calib *c)
{
	return FTS__LD(c->newest);
}

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

/* May a segment from r0 at rate mult / 2^shift over span ticks take the fast path
 * (FTS__SEG_FAST)? Rising, shift >= 1, the product over the span within 62 bits, and
 * the line's end within an int64. Decided by whoever writes a segment, never read
 * from outside. */
static inline int fts__seg_fast(int64_t r0, int64_t mult, uint32_t shift, uint64_t span)
{
	unsigned __int128 p;

	if (mult < 0 || shift < 1 || shift > 62)
		return 0;
	p = (unsigned __int128)span * (uint64_t)mult >> (shift - 1);
	return p < ((unsigned __int128)1 << 62) && (__int128)r0 + (__int128)((p + 1) >> 1) <= INT64_MAX;
}

/* The line of a FTS__SEG_FAST segment at x, c0 <= x <= c1, in 64 bits: the product
 * shifted by shift - 1 fits, and its last bit rounds. */
static inline int64_t fts__line_at(const struct fts__line *l, uint64_t x)
{
	unsigned __int128 p = (unsigned __int128)(x - l->c0) * (uint64_t)l->mult;
	uint64_t v = (uint64_t)(p >> ((l->shift - 1) & 63));
	return l->r0 + (int64_t)((v + 1) >> 1);
}

/* Convert x with line l found at where (err may be NULL). -ERANGE when the result or
 * its bound does not fit an int64. */
static inline int fts__line_convert(const struct fts__line *l, int where, uint64_t x,
				    int64_t *ns, int64_t *err)
{
	__int128 est, bound;
	uint64_t d;

	if (l->err > INT64_MAX)   /* the writer says the segment does not fit */
		return -ERANGE;
	if (where == 0 && (l->flags & FTS__SEG_FAST)) {
		*ns = fts__line_at(l, x);
		if (err)
			*err = (int64_t)l->err;
		return 0;
	}
	d = x >= l->c0 ? x - l->c0 : l->c0 - x;
	est = fts__mulshift(d, l->mult, l->shift);
	est = l->r0 + (x >= l->c0 ? est : -est);
	bound = (__int128)l->err + (where ? fts__mulshift(d, l->grow, l->shift) + 1 : 0);
	/* A bound past int64 says nothing; report it as a result that does not fit. */
	if (est > INT64_MAX || est < INT64_MIN || bound > INT64_MAX)
		return -ERANGE;
	*ns = (int64_t)est;
	if (err)
		*err = (int64_t)bound;
	return 0;
}

#endif /* FTS__HISTORY_H */
