/* history.h - a history's published form, and its read side inline (the conversion
 * hot path). calib.c estimates and writes; readers only read, and write nothing shared.
 *
 * The history is a list of segments, each a line with a bound: for a counter value x
 * from the segment's key up to the next key, the reference read within err of
 * r0 + (x - key) * mult / 2^shift. Final segments, which no later sample changes, sit in
 * chunks of FTS__CHUNK_RECS, listed in order by a directory; the few after them that the
 * next samples may still change (provisional), and the lines carried on before the first
 * key (head) and after the newest sample (tail), sit in the published state itself.
 * The state also carries the newest final segments (recent), so that a recent
 * stamp's look-up, the common case, ends in the state's own page. Any other takes
 * the directory (a few KiB) in rounds of independent loads; then the
 * chunk's index, one cache line a level (FTS__SUM_KEYS: the writer's own, never
 * published) or, in a view of a history written elsewhere, the chunk's keys in rounds
 * of independent loads; then the key's line, its segments' lines fetched with it.
 *
 * Publishing is a latch (the kernel's seqcount latch): the state is kept twice, and a
 * counter says which copy readers take. The writer moves readers to one copy, rewrites
 * the other, moves them over, and rewrites the first. Readers never wait: one copy is
 * always whole, even when the writer stops half way (a killed process publishing to a
 * file). A reader retries when the counter moved while it read. Final segments are
 * written to the chunks before a state that counts them is published, and are not
 * changed while one does; a merge (rule 10) writes a new list into free chunks and the
 * other directory. Everything lies at fixed offsets in one region of memory, so the
 * same layout can be mapped from sealed memory by other processes (shared.c), where every
 * index and count read is checked against the reader's own limits. Not installed. */
#ifndef FTS__HISTORY_H
#define FTS__HISTORY_H

#include <errno.h>
#include <stdint.h>

#include "estimate.h"
#include "internal.h"

#define FTS__CHUNK_RECS 256   /* fts__chunk_search's rounds assume 256 */
#define FTS__MAX_PROV 8      /* provisional segments at most */
#define FTS__PUB_RECENT 8    /* final segments copied into the state, the newest */

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
	uint32_t pad;
};

/* A line carried on outside the history: est = r0 + (x - key) * mult / 2^shift,
 * bound err + |x - key| * grow / 2^shift. */
struct fts__end {
	uint64_t key;
	struct fts__rec rec;
	int64_t grow;
};

/* One published state. Chunk k of the final list holds FTS__CHUNK_RECS segments, the
 * last one the rest. The last nrecent final segments are read from the state, from
 * rkey and recent, never from the chunks: so that a look-up of a stamp they cover
 * touches no page but the state's. publish() (calib.c) copies them there from the
 * chunks, where the writer keeps them too, into every state it publishes. */
struct fts__pub {
	uint64_t newest;              /* counter of the newest sample; 0: no segment yet */
	uint32_t nfinal;              /* final segments */
	uint32_t dir;                 /* 0 or 1: the directory that lists their chunks */
	uint32_t nprov;               /* provisional segments after them */
	uint32_t nrecent;             /* the final ones copied: min(nfinal, FTS__PUB_RECENT) */
	struct fts__end head, tail;
	uint64_t pkey[FTS__MAX_PROV];
	struct fts__rec prov[FTS__MAX_PROV];
	uint64_t rkey[FTS__PUB_RECENT];
	struct fts__rec recent[FTS__PUB_RECENT];
};

/* The start of a history's region: the latch and the two states. The two directories
 * and the pool of chunks follow at offsets fts__region_layout() gives. */
struct fts__hot {
	_Alignas(64) uint32_t latch;  /* readers take pub[latch & 1] */
	uint32_t pad;
	struct fts__pub pub[2];
};

/* The writer's index of a chunk (FTS__SUM_KEYS keys, five cache lines), kept beside the
 * chunks in its own memory, never published: line 0 the keys of segments 0, 64, 128 and
 * 192, lines 1-4 those of every eighth segment (0, 8 ... 248). Written with the keys
 * (calib.c's put_at), so a state that counts a chunk's segments finds its index whole. */
#define FTS__SUM_KEYS 40

struct fts__writer;

/* A history's handle: what a reader reads of it first, in its first 64 bytes (the
 * process clock keeps its own handles a cache line each, clockobj.h). */
struct fts_calib {
	struct fts__hot *hot;
	struct fts__dirent *dir[2];   /* dircap entries each */
	char *pool;                   /* dircap chunks */
	uint32_t dircap;              /* the reader's own limit on every index */
	uint32_t flags_ok;            /* segment flags this reader may trust */
	int bounded;                  /* retries are bounded: another process writes */
	uint64_t *sum;                /* the writer's index, dircap chunks'; NULL in a view */
	void *region;                 /* what to unmap at free, and its length */
	size_t region_len;
	struct fts__writer *w;        /* NULL: a view of a history written elsewhere */
};

/* The region for dircap chunks: where the directories and the pool start, and its
 * length. */
static inline size_t fts__region_layout(uint32_t dircap, size_t *dir0, size_t *dir1, size_t *pool)
{
	size_t d = ((sizeof(struct fts__hot) + 4095) & ~(size_t)4095);
	size_t dl = (((size_t)dircap * sizeof(struct fts__dirent)) + 4095) & ~(size_t)4095;

	*dir0 = d;
	*dir1 = d + dl;
	*pool = d + 2 * dl;
	return *pool + (size_t)dircap * sizeof(struct fts__chunk);
}

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

/* ---- the latch ------------------------------------------------------------------------ */

/* Writer: move readers to the other copy. What was written before is seen by whoever
 * sees the move; what is written after, only with the move (the fence pairs with the
 * reader's in fts__latch_retry). */
static inline void fts__latch_flip(struct fts__hot *h)
{
	__atomic_store_n(&h->latch, FTS__LD(h->latch) + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline unsigned fts__latch_begin(const struct fts_calib *c)
{
	return __atomic_load_n(&c->hot->latch, __ATOMIC_ACQUIRE);
}

static inline int fts__latch_retry(const struct fts_calib *c, unsigned l)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return FTS__LD(c->hot->latch) != l;
}

/* How often a reader of a history that another process writes retries before it
 * gives up: the writer republishes at most a few times a second, so this many moves
 * during one look-up say the file is not a history being written. */
#define FTS__MAX_RETRIES 1000

static inline void fts__rec_load(const struct fts_calib *c, const struct fts__rec *src,
				 struct fts__line *l)
{
	l->r0 = FTS__LD(src->r0);
	l->mult = FTS__LD(src->mult);
	l->err = FTS__LD(src->err);
	l->shift = FTS__LD(src->shift);
	l->flags = FTS__LD(src->flags) & c->flags_ok;
}

static inline void fts__end_load(const struct fts_calib *c, const struct fts__end *e,
				 struct fts__line *l)
{
	l->c0 = l->c1 = FTS__LD(e->key);
	fts__rec_load(c, &e->rec, l);
	l->grow = FTS__LD(e->grow);
}

/* The one read loop of the latch. A reader takes the state fts__latch_read() gives,
 * reads what it needs, then asks fts__latch_again(): 0 when what it read is whole, 1
 * when the writer moved it meanwhile (read again), -EAGAIN when a history another
 * process writes (c->bounded) moved under it FTS__MAX_RETRIES times in a row: that is
 * not a history being written, and its reader gives up. A history this process writes
 * is read again until whole: its writer finishes what it started. */
struct fts__reading {
	unsigned latch, tries;
};

static inline const struct fts__pub *fts__latch_read(const struct fts_calib *c,
						     struct fts__reading *r);

static inline int fts__latch_again(const struct fts_calib *c, struct fts__reading *r)
{
	if (!fts__latch_retry(c, r->latch))
		return 0;
	return c->bounded && ++r->tries >= FTS__MAX_RETRIES ? -EAGAIN : 1;
}

/* The last index in keys[0..n) whose key is <= x (keys[0] <= x; 0 for n 0 or 1, or
 * when no key is: a hostile list still ends the search). */
static inline uint32_t fts__search(const uint64_t *keys, uint32_t n, uint64_t x, size_t stride)
{
	uint32_t lo = 0, hi = n ? n - 1 : 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (FTS__LD(*(const uint64_t *)(const void *)((const char *)keys + mid * stride)) <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* The last index in a full chunk whose key is <= x (key[0] <= x), as fts__search gives
 * it, in three rounds of independent loads where the binary search makes eight
 * dependent ones, most of them misses on a long history: the 256 keys are 32 cache
 * lines of 8; the first keys of lines 4, 8 ... 28 pick the quarter, those of the three
 * lines after the quarter's first its line, and that line the key. Each round's loads
 * go out together, so a round costs about one miss. The line's four lines of segments
 * are fetched with it: the one wanted is among them. Every index stays in the chunk
 * whatever the keys hold (a hostile list). */
_Static_assert(FTS__CHUNK_RECS == 256, "fts__chunk_search's rounds: 32 lines of 8 keys");

static inline uint32_t fts__chunk_search(const struct fts__chunk *ch, uint64_t x)
{
	uint32_t q = 0, l = 0, i = 0, k;

	for (k = 1; k < 8; k++)
		q += FTS__LD(ch->key[32 * k]) <= x;
	for (k = 1; k < 4; k++)
		l += FTS__LD(ch->key[32 * q + 8 * k]) <= x;
	l += 4 * q;
	for (k = 0; k < 4; k++)   /* 8 segments of 32 bytes: 4 lines */
		__builtin_prefetch(&ch->rec[8 * l + 2 * k]);
	for (k = 1; k < 8; k++)
		i += FTS__LD(ch->key[8 * l + k]) <= x;
	return 8 * l + i;
}

/* The last entry of dir[0..n) whose first key is <= x (0 when none is), as fts__search
 * gives it, in rounds of 7 independent loads that each cut the range to an eighth,
 * without a branch to mispredict. */
static inline uint32_t fts__dir_search(const struct fts__dirent *dir, uint32_t n, uint64_t x)
{
	uint32_t lo = 0, len = n, step, c, k;

	while (len > 1) {
		step = (len + 7) / 8;
		c = 0;
		for (k = 1; k < 8; k++)
			c += k * step < len && FTS__LD(dir[lo + k * step].first) <= x;
		lo += c * step;
		len = c * step + step <= len ? step : len - c * step;
	}
	return lo;
}

/* fts__chunk_search with the chunk's index (FTS__SUM_KEYS keys at sum): one line a
 * level (the two levels take 160 KiB for a day's history, cached while look-ups keep
 * coming), then the key's line with its segments' lines, fetched together. */
static inline uint32_t fts__sum_search(const uint64_t *sum, const struct fts__chunk *ch, uint64_t x)
{
	uint32_t q = 0, l = 0, i = 0, k;

	for (k = 1; k < 5; k++)   /* a cold index: its five lines in one round, not two */
		__builtin_prefetch(&sum[8 * k]);
	for (k = 1; k < 4; k++)
		q += FTS__LD(sum[k]) <= x;
	for (k = 1; k < 8; k++)
		l += FTS__LD(sum[8 + 8 * q + k]) <= x;
	l += 8 * q;
	for (k = 0; k < 4; k++)
		__builtin_prefetch(&ch->rec[8 * l + 2 * k]);
	for (k = 1; k < 8; k++)
		i += FTS__LD(ch->key[8 * l + k]) <= x;
	return 8 * l + i;
}

/* Segment i of the n the state itself keys (keys, recs: the provisional ones, or the
 * recent copy), where x lies (keys[0] <= x), its line in l, up to end after the last. */
static inline int fts__state_line(const struct fts_calib *c, const uint64_t *keys,
				  const struct fts__rec *recs, uint32_t n, uint64_t end, uint64_t x,
				  struct fts__line *l)
{
	uint32_t i = fts__search(keys, n, x, sizeof(uint64_t));

	l->c0 = FTS__LD(keys[i]);
	l->c1 = i + 1 < n ? FTS__LD(keys[i + 1]) : end;
	fts__rec_load(c, &recs[i], l);
	l->grow = 0;
	return 0;
}

/* The chunks' part of fts__pub_lookup: x among the nf final segments they hold for
 * the state p (not the copy of the newest), which end at after. Out of line: the
 * look-up of a recent stamp, the common case, ends in the state's page, and its code
 * (inlined in the conversion's hot section) stays small without this walk. */
static __attribute__((noinline, unused)) int fts__pub_chunks(const struct fts_calib *c,
							     const struct fts__pub *p, uint32_t nf,
							     uint64_t after, uint64_t x,
							     struct fts__line *l)
{
	uint32_t nc = (uint32_t)(((uint64_t)nf + FTS__CHUNK_RECS - 1) / FTS__CHUNK_RECS), d, m,
		 i, di = FTS__LD(p->dir) & 1;
	const struct fts__dirent *dir = c->dir[di];
	const struct fts__chunk *ch;

	/* The last chunk first. */
	d = nc - 1;
	if (x < FTS__LD(dir[d].first))
		d = fts__dir_search(dir, nc - 1, x);
	di = FTS__LD(dir[d].chunk);
	if (di >= c->dircap) {
		*l = (struct fts__line){ .c0 = 1 };   /* well formed, matches nothing */
		return -ENODATA;
	}
	ch = fts__chunk_at(c, di);
	m = d + 1 < nc ? FTS__CHUNK_RECS : nf - d * FTS__CHUNK_RECS;
	if (m == FTS__CHUNK_RECS && c->sum)
		i = fts__sum_search(c->sum + (size_t)di * FTS__SUM_KEYS, ch, x);
	else if (m == FTS__CHUNK_RECS)
		i = fts__chunk_search(ch, x);
	else
		i = fts__search(ch->key, m, x, sizeof(uint64_t));
	l->c0 = FTS__LD(ch->key[i]);
	if (i + 1 < m)
		l->c1 = FTS__LD(ch->key[i + 1]);
	else if (d + 1 < nc)
		l->c1 = FTS__LD(dir[d + 1].first);
	else
		l->c1 = after;
	fts__rec_load(c, &ch->rec[i], l);
	l->grow = 0;
	return 0;
}

/* Look x up in state p without the latch: the caller retries. Every index and count is
 * checked, so a torn or hostile copy gives a wrong answer, never a wild read.
 * The list's end is read from the state (the copy of the newest final segments, then
 * the provisional ones), the rest from the chunks (fts__pub_chunks): each segment from
 * one place, as fts__pub_segment gives it, even in a memory whose copy and chunks
 * disagree.
 * -ENODATA (no segment, or a state that is not one), -1 (before the first key), 1
 * (after the newest sample), or 0 (inside), with the line in l. */
static inline int fts__pub_lookup(const struct fts_calib *c, const struct fts__pub *p, uint64_t x,
				  struct fts__line *l)
{
	uint64_t newest = FTS__LD(p->newest), after;
	uint32_t nf = FTS__LD(p->nfinal), np = FTS__LD(p->nprov), nr = FTS__LD(p->nrecent);

	if (!newest || np > FTS__MAX_PROV || nr > FTS__PUB_RECENT || nr > nf || nf + np == 0)
		goto none;
	nf -= nr;   /* from here on, the final segments read from the chunks */
	if ((uint64_t)nf > (uint64_t)c->dircap * FTS__CHUNK_RECS)
		goto none;   /* more chunks than the reader's limit */
	if (x < FTS__LD(p->head.key)) {
		fts__end_load(c, &p->head, l);
		return -1;
	}
	if (x > newest) {
		fts__end_load(c, &p->tail, l);
		return 1;
	}
	/* Recent stamps are the common case: the state's own segments first. */
	if (np && (nf + nr == 0 || x >= FTS__LD(p->pkey[0])))
		return fts__state_line(c, p->pkey, p->prov, np, newest, x, l);
	after = np ? FTS__LD(p->pkey[0]) : newest;   /* where the final list ends */
	if (nr && (nf == 0 || x >= FTS__LD(p->rkey[0])))
		return fts__state_line(c, p->rkey, p->recent, nr, after, x, l);
	return fts__pub_chunks(c, p, nf, nr ? FTS__LD(p->rkey[0]) : after, x, l);
none:
	*l = (struct fts__line){ .c0 = 1 };   /* well formed, matches nothing */
	return -ENODATA;
}

/* The state readers take now, for the latch value l. */
static inline const struct fts__pub *fts__pub_of(const struct fts_calib *c, unsigned l)
{
	return &c->hot->pub[l & 1];
}

static inline const struct fts__pub *fts__latch_read(const struct fts_calib *c,
						     struct fts__reading *r)
{
	r->latch = fts__latch_begin(c);
	return fts__pub_of(c, r->latch);
}

/* The line for x, from one whole state (fts__pub_lookup's answer), or -EAGAIN (see
 * fts__latch_again). */
static inline int fts__calib_find(const struct fts_calib *c, uint64_t x, struct fts__line *l)
{
	struct fts__reading rd = { 0 };
	int where, again;

	do
		where = fts__pub_lookup(c, fts__latch_read(c, &rd), x, l);
	while ((again = fts__latch_again(c, &rd)) > 0);
	return again < 0 ? again : where;
}

/* The tail's line (the newest sample's band carried on) for x past the newest sample,
 * as fts__calib_find gives it there, without the look-up's code: 1 with *l, or 0 (x is
 * not past it, no segment yet, or a state that is not one: fts__calib_find decides). */
static inline int fts__calib_tail(const struct fts_calib *c, uint64_t x, struct fts__line *l)
{
	struct fts__reading rd = { 0 };
	int past, again;

	do {
		const struct fts__pub *p = fts__latch_read(c, &rd);
		uint64_t newest = FTS__LD(p->newest);

		if ((past = newest && x > newest && FTS__LD(p->nprov) <= FTS__MAX_PROV &&
			    FTS__LD(p->nfinal) + FTS__LD(p->nprov) > 0))
			fts__end_load(c, &p->tail, l);
	} while ((again = fts__latch_again(c, &rd)) > 0);
	return again == 0 && past;
}

static inline uint64_t fts__calib_newest_counter(const struct fts_calib *c)
{
	return FTS__LD(fts__pub_of(c, fts__latch_begin(c))->newest);
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
 * shifted by shift - 1 fits, and its last bit rounds. The sum is taken unsigned: a
 * line read torn from a history being written (the latch then discards the result)
 * may give any value, but no undefined behaviour. */
static inline int64_t fts__line_at(const struct fts__line *l, uint64_t x)
{
	unsigned __int128 p = (unsigned __int128)(x - l->c0) * (uint64_t)l->mult;
	uint64_t v = (uint64_t)(p >> ((l->shift - 1) & 63));
	return (int64_t)((uint64_t)l->r0 + ((v + 1) >> 1));
}

/* Convert x with line l found at where (err may be NULL). -ERANGE when the result or
 * its bound does not fit an int64. */
static inline int fts__line_convert(const struct fts__line *l, int where, uint64_t x,
				    int64_t *ns, int64_t *err)
{
	__int128 est, bound;
	uint64_t d;

	/* the writer says the segment does not fit; or it is not one (a hostile file) */
	if (l->err > INT64_MAX || l->shift > 62 || l->grow < 0)
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

/* Rule 11, the bridge: x lies between the end of one history's samples and the start of
 * another's, or past the newest sample of a history with a clock read after it (a line
 * through the read, at the tail's band). Between them the clock stepped at most once
 * and otherwise kept the band (P1, P2): what it read at x lies in the first's
 * extrapolation forward (fwd) or the second's backward (bwd), joined by
 * fts__estimate_rule11_join (estimate.h). err NULL: no bound wanted. */
static inline int fts__bridge(const struct fts__line *fwd, const struct fts__line *bwd,
			      uint64_t x, int64_t *ns, int64_t *err)
{
	int64_t nf, ef, nb, eb;
	int rc;

	if ((rc = fts__line_convert(fwd, 1, x, &nf, &ef)) < 0 ||
	    (rc = fts__line_convert(bwd, -1, x, &nb, &eb)) < 0)
		return rc;
	return fts__estimate_rule11_join(nf, ef, nb, eb, ns, err);
}

/* ---- history.c ---------------------------------------------------------------------- */
/* The state published now, copied whole (what a reader needs to count and range):
 * *newest, the first segment's key in *first, and the segments *n (0 when none is
 * published). 0, or -EAGAIN (fts__latch_again). */
int fts__pub_read(const struct fts_calib *c, uint64_t *newest, uint64_t *first, size_t *n);
/* Segment i of published state p, checked as a reader checks; -1 if there is none. */
int fts__pub_segment(const struct fts_calib *c, const struct fts__pub *p, size_t i, uint64_t *key,
		     struct fts__rec *r);

#endif /* FTS__HISTORY_H */
