/* convert.c - stamps and their conversion through the process history (clock.c keeps
 * it fresh). */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"
#include "history.h"
#include "clock.h"
#include "convert.h"
#include "estimate.h"
#include "freq.h"
#include "tagged.h"

fast_timestamp_t fts__clock_stamp(void)
{
	return fts__clock_stamp_inline();
}

/* A tagged stamp holds 63-bit two's complement ns: sign-extend bit 62. */
static int64_t clock_stamp_ns(fast_timestamp_t s)
{
	return (int64_t)(s << 1) >> 1;
}

/* ---- rule 12: the fresh line -------------------------------------------------------
 *
 * A stamp past the newest sample needs a clock read after it (rule 11). One read serves
 * the stamps after it too, while the kernel computes the clock as it did then. It
 * changes how only at a timekeeping update (a tick, a step, a new rate), and every
 * update moves CLOCK_REALTIME_COARSE, the clock at the last one: while that reads as it
 * did before the read, the clock ran on since on one line, with no step, at a rate in
 * the tail's band (P2). What it read at a later stamp then lies on the read's line
 * carried on at the band, which lies inside the bridge's estimate and bound at the
 * read carried on the same way: one line, est = r0 + (x - c0) * mult, bound = err +
 * |x - c0| * grow (+ 1 ns of rounding). For up to FRESH_SPAN_NS after a read (the
 * kernel updates every few ms while a CPU is busy), and while the bound has grown by
 * less than FRESH_GROW_NS (the line's rate may be off by the growth), a stamp converts by that line and
 * one coarse clock read: no counter read, no look-up, no bridge, and a sorted batch
 * costs one multiply a stamp. Stamps between the newest sample and the read bridge to
 * the read itself. The line is made by a conversion that reads the clock
 * (fts__clock_fresh) and shared by every thread: readers only read it; a drop (a new
 * history or source, a fault, new offsets between CPUs) bumps the generation, and a
 * line of an older generation is not used. */
#define FRESH_SPAN_NS 10000000
#define FRESH_GROW_NS 50
#define FRESH_CHAIN_NS 100000000   /* the sampler's period */

struct fresh {
	_Alignas(64) unsigned seq;   /* odd while being written */
	unsigned gen;                /* bumped by fts__fresh_drop */
	unsigned made;               /* the generation the line was made in */
	uint32_t shift;
	uint64_t c0, c1;             /* the counter values it serves; c0: the read's middle */
	int64_t epoch;               /* the source's timekeeping epoch before the read */
	int64_t r0, mult, grow;      /* the line: the bridge's estimate at c0, the tail's rate */
	uint64_t err;                /* the bridge's bound at c0 */
	int64_t read_r0;             /* the read itself: its reading and bound at c0 */
	uint64_t read_err;
	int64_t skew;                /* offsets between CPUs, when it was made */
	uint64_t chain_end;          /* renewals bridge from it up to here */
};
/* One line a clock (enum fts__clk): two cache lines each. */
static struct fresh fresh_of[FTS__NCLK] FTS__HOT_DATA = {
	{ .made = 1 }, { .made = 1 }, { .made = 1 }, { .made = 1 }, { .made = 1 } };

/* A private copy of the fresh line. */
struct fresh_view {
	struct fts__line line, read;
	int64_t epoch, skew;
	uint64_t chain_end;
};

/* The generation of every line is fresh_of[0]'s. */
FTS__HOT unsigned fts__fresh_gen(void)
{
	return __atomic_load_n(&fresh_of[0].gen, __ATOMIC_ACQUIRE);
}

void fts__fresh_drop(void)
{
	__atomic_fetch_add(&fresh_of[0].gen, 1, __ATOMIC_RELEASE);
}

FTS__HOT void fts__fresh_publish(int k, const struct fts__line *tail, const struct fts__line *rate,
			const struct fts__line *read, int64_t epoch, int64_t skew, unsigned gen,
			uint64_t chain_end)
{
	int64_t n0, e0, mult = tail->mult, grow = tail->grow;
	struct fresh *fr = &fresh_of[k];
	uint64_t span;
	unsigned s;

	if (tail->mult <= 0 || tail->shift > 62 || tail->grow < 0 || skew < 0 ||
	    fts__bridge(tail, read, read->c0, &n0, &e0) < 0)
		return;
	/* The rate: the newest segment's, measured over its run (the band's middle is the
	 * middle of what one interval allows), in the tail's fixed point; the growth covers
	 * the band around the tail's rate from there. */
	if (rate && rate->shift <= tail->shift && rate->mult > 0 && !(rate->flags & FTS__SEG_STEP)) {
		__int128 m = (__int128)rate->mult << (tail->shift - rate->shift);
		__int128 d = m > tail->mult ? m - tail->mult : tail->mult - m;
		if (m < INT64_MAX && d < (__int128)tail->grow * 4) {
			mult = (int64_t)m;
			grow = tail->grow + (int64_t)d + 1;
		}
	}
	/* FRESH_SPAN_NS, or less where the band is wide (a short newest interval): the
	 * line leaves the truth by at most its growth, and keeps it under FRESH_GROW_NS */
	span = (uint64_t)(((unsigned __int128)FRESH_SPAN_NS << tail->shift) / (uint64_t)mult);
	if (grow > 0 && (unsigned __int128)span * (uint64_t)grow >
			(unsigned __int128)FRESH_GROW_NS << tail->shift)
		span = (uint64_t)(((unsigned __int128)FRESH_GROW_NS << tail->shift) / (uint64_t)grow);
	/* one multiply over the span, and bounds far from overflow */
	if (span > (UINT64_C(1) << 40) || read->c0 > FTS_STAMP_CLOCK_TAG - span ||
	    !fts__seg_fast(n0, mult, tail->shift, span) || e0 > INT64_C(1) << 60 ||
	    skew > INT64_C(1) << 60 || read->err > UINT64_C(1) << 60 ||
	    fts__mulshift(span, grow, tail->shift) > (__int128)1 << 60)
		return;
	if (!chain_end)
		chain_end = tail->c0 + (uint64_t)(((unsigned __int128)FRESH_CHAIN_NS << tail->shift) /
						  (uint64_t)tail->mult);
	s = FTS__LD(fr->seq);
	if ((s & 1) || !__atomic_compare_exchange_n(&fr->seq, &s, s + 1, 0, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED))
		return;   /* another thread writes one now */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	FTS__ST(fr->shift, tail->shift);
	FTS__ST(fr->c0, read->c0);
	FTS__ST(fr->c1, read->c0 + span);
	FTS__ST(fr->epoch, epoch);
	FTS__ST(fr->r0, n0);
	FTS__ST(fr->mult, mult);
	FTS__ST(fr->grow, grow);
	FTS__ST(fr->err, (uint64_t)e0);
	FTS__ST(fr->read_r0, read->r0);
	FTS__ST(fr->read_err, read->err);
	FTS__ST(fr->skew, skew);
	FTS__ST(fr->chain_end, chain_end);
	FTS__ST(fr->made, gen);
	__atomic_store_n(&fr->seq, s + 2, __ATOMIC_RELEASE);
}

/* A whole copy of the fresh line of this generation: 1; 0 if there is none. */
FTS__HOT static int fresh_load(int k, struct fresh_view *f)
{
	const struct fresh *fr = &fresh_of[k];
	unsigned s = __atomic_load_n(&fr->seq, __ATOMIC_ACQUIRE);

	if ((s & 1) || FTS__LD(fr->made) != fts__fresh_gen())
		return 0;
	f->line.c0 = f->read.c0 = FTS__LD(fr->c0);
	f->line.c1 = f->read.c1 = FTS__LD(fr->c1);
	f->line.shift = f->read.shift = FTS__LD(fr->shift);
	f->line.mult = f->read.mult = FTS__LD(fr->mult);
	f->line.grow = f->read.grow = FTS__LD(fr->grow);
	f->line.r0 = FTS__LD(fr->r0);
	f->line.err = FTS__LD(fr->err);
	f->read.r0 = FTS__LD(fr->read_r0);
	f->read.err = FTS__LD(fr->read_err);
	f->line.flags = FTS__SEG_FAST;
	f->read.flags = 0;
	f->epoch = FTS__LD(fr->epoch);
	f->skew = FTS__LD(fr->skew);
	f->chain_end = FTS__LD(fr->chain_end);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return FTS__LD(fr->seq) == s;
}

/* Has the kernel kept computing the clock as at the read? */
FTS__HOT static int fresh_kept(const struct fresh_view *f)
{
	int64_t epoch;

	return fts__clock_epoch(&epoch) == 0 && epoch == f->epoch;
}

static int fresh_covers(const struct fresh_view *f, uint64_t x)
{
	return x >= f->line.c0 && x <= f->line.c1;
}

/* Rule 12's line at x, covered (err may be NULL). Its publisher checked that nothing
 * overflows over the span. */
FTS__HOT static void fresh_at(const struct fresh_view *f, uint64_t x, int64_t *ns, int64_t *err)
{
	*ns = fts__line_at(&f->line, x);
	if (err)
		*err = (int64_t)(f->line.err + (uint64_t)fts__mulshift(x - f->line.c0, f->line.grow,
								     f->line.shift) + 1);
}

/* A stamp past the line after the kernel updated the clock (the first conversion after
 * a few ms of idle, most often): the line stands for the tail (it is the tail's band
 * carried on from a read), and a read now bridges from it (rule 11), without the
 * history's pages. The read agrees with the line (else a step or new rate: the history
 * takes it, convert_checked) and becomes the next line; lines renewed so carry on
 * from the tail's key for at most FRESH_CHAIN_NS (the sampler makes a line from each
 * new tail; without it, a conversion that reads the history does). 1 if converted. */
static int fresh_renew(int k, const struct fresh_view *f, uint64_t x, int64_t *ns, int64_t *err)
{
	struct fts__line read, fwd = f->line;
	int64_t p, bound;
	unsigned gen = fts__fresh_gen();

	fwd.flags = 0;
	if (x < fwd.c0 || x > f->chain_end || fts__clock_read(k, &fwd, &read) < 0 || read.c0 < x ||
	    fts__line_convert(&fwd, 1, read.c0, &p, &bound) < 0 ||
	    (p > read.r0 ? p - read.r0 : read.r0 - p) > bound + (int64_t)read.err ||
	    fts__bridge(&fwd, &read, x, ns, err) < 0)
		return 0;
	if (err)
		*err = *err > INT64_MAX - f->skew ? INT64_MAX : *err + f->skew;
	fts__clock_line(k, &fwd, NULL, &read, gen, f->chain_end);
	return 1;
}

/* ---- conversions ----------------------------------------------------------------- */

/* Is x inside segment l, as the look-up would find it: [c0, c1), and c1 itself only for
 * the newest? */
static int inside(const struct fts__line *l, uint64_t x, uint64_t newest)
{
	return x >= l->c0 && (x < l->c1 || (x == l->c1 && x == newest));
}

/* The array hot path: the stamps from *i on that lie inside seg, by its line alone (no
 * bound wanted). Leaves *i at the last one done; 0 if seg does not qualify. */
static int line_run(const struct fts__line *seg, const fast_timestamp_t *stamps, size_t n,
		    int64_t *ns, size_t *i, uint64_t newest)
{
	const struct fts__line l = *seg;   /* a private copy: stores to ns cannot alias it */
	size_t k = *i;

	if (!(l.flags & FTS__SEG_FAST))
		return 0;
	for (; k < n && inside(&l, stamps[k], newest); k++)
		ns[k] = fts__line_at(&l, stamps[k]);
	*i = k - 1;
	return 1;
}

/* A stamp past the newest sample, with the tail's line: rule 11 with the read after it,
 * the fresh line's (f) or one just taken (read); the tail alone (rule 9) with neither. */
static int past_newest(const struct fts__line *tail, uint64_t x, const struct fresh_view *f,
		       const struct fts__line *read, int64_t *ns, int64_t *err)
{
	if (f && x < f->line.c0)
		return fts__bridge(tail, &f->read, x, ns, err);
	if (read)
		return fts__bridge(tail, read, x, ns, err);
	return fts__line_convert(tail, 1, x, ns, err);
}

/* The line a batch's last look-up found, kept for the stamps after it: a sorted batch
 * stays in one segment, or past the newest sample, and needs no look-up more. */
struct cached {
	enum { CACHED_NONE, CACHED_SEGMENT, CACHED_TAIL } what;
	struct fts__line line;
};

/* Where x lies in state p (newest: its newest sample), from the cache when it holds x,
 * else by a look-up that the cache then keeps: 0 inside a segment, 1 past the newest
 * sample, -1 before the first, -ENODATA (not a state); the line in ca->line. */
static inline int locate(const struct fts_calib *c, const struct fts__pub *p, uint64_t newest,
			 uint64_t x, struct cached *ca)
{
	int where;

	if (ca->what == CACHED_SEGMENT && inside(&ca->line, x, newest))
		return 0;
	if (ca->what == CACHED_TAIL && x > newest)
		return 1;
	where = fts__pub_lookup(c, p, x, &ca->line);
	ca->what = where == 0 ? CACHED_SEGMENT : where == 1 ? CACHED_TAIL : CACHED_NONE;
	return where;
}

/* Rule 15 in the live process: 0, or -ERANGE for a counter stamp x outside the history
 * in view (where: before it, -1; past it, 1, with l its tail) that this process cannot
 * have stored: before the boot (by CLOCK_MONOTONIC_RAW's history), or past the counter
 * read after it (f's or read, or one now) by more than the offsets between CPUs allow.
 * What cannot be told (no such history, a faulty counter) is allowed. */
static int live_reach(int where, uint64_t x, const struct fts__line *l, const struct fresh_view *f,
		      const struct fts__line *read)
{
	int64_t raw = 0, raw_err = 0, ahead = 0;
	uint64_t now;

	if (where < 0) {
		const struct fts_calib *h = fts__clock_history(FTS__CLK_RAW);
		struct fts__line rl;
		int w;

		if (!h || (w = fts__calib_find(h, x, &rl)) < -1)
			return 0;
		if (fts__line_convert(&rl, w, x, &raw, &raw_err) < 0)
			return -ERANGE;   /* further back than an int64 of ns */
	} else {
		now = read ? read->c0 : f && x < f->line.c0 ? f->read.c0 : fts__clock_counter_now();
		if (!now || x <= now || l->mult <= 0 || l->shift > 62)
			return 0;
		__int128 a = fts__mulshift(x - now, l->mult, l->shift);
		ahead = a > INT64_MAX ? INT64_MAX : (int64_t)a;
	}
	return fts__reach_live(raw, raw_err, ahead, fts__clock_skew_ns()) ? 0 : -ERANGE;
}

/* A stamp of the history used before this one (a copy of a shared history the clock
 * left), which no one writes. */
static int from_old(const struct fts_calib *old, uint64_t x, int64_t *ns, int64_t *err)
{
	struct fts__line l;
	int where = fts__calib_find(old, x, &l), rc;

	if (where < -1)
		return -EAGAIN;
	if (where < 0 && (rc = live_reach(where, x, &l, NULL, NULL)) < 0)
		return rc;
	return fts__line_convert(&l, where, x, ns, err);
}

/* A tagged stamp on CLOCK_REALTIME: its own reading, exact. */
static void tagged_at(fast_timestamp_t x, int64_t *ns, int64_t *err)
{
	*ns = clock_stamp_ns(x);
	if (err)
		*err = 0;
}

/* Convert stamps[0..n) into ns/err (err may be NULL) with the process clock's
 * histories of clock k (fts__clock_view): the one in use, and the one used before it,
 * if any. f, if not NULL, is the fresh line (kept: rule 12), for the stamps it covers
 * and the bridge before it; read, if not NULL, a clock read after every stamp
 * (fts__clock_fresh), for the others past the newest sample. Tagged stamps give their
 * CLOCK_REALTIME reading. -EAGAIN when a history another process writes kept moving;
 * -ESTALE for a counter stamp with no history in view (another thread left the shared
 * one and is making the process's). */
static int convert_many(int k, const fast_timestamp_t *stamps, size_t n, int64_t *ns, int64_t *err,
			const struct fresh_view *f, const struct fts__line *read)
{
	struct fts__clock_view v;
	struct fts__line otail;
	struct fts__reading rd = { 0 };
	const struct fts__pub *p;
	uint64_t newest, onewest = 0;
	int rc, again;

	fts__clock_view(k, &v);
	if (!v.cur) {   /* no history yet: only tagged stamps can be converted */
		for (size_t i = 0; i < n; i++) {
			if (!(stamps[i] & FTS_STAMP_CLOCK_TAG))
				return -ESTALE;
			tagged_at(stamps[i], &ns[i], err ? &err[i] : NULL);
		}
		return 0;
	}
	if (v.old) {
		onewest = fts__calib_newest_counter(v.old);
		fts__calib_find(v.old, onewest + 1, &otail);
	}
retry:
	p = fts__latch_read(v.cur, &rd);
	newest = FTS__LD(p->newest);
	rc = 0;
	struct cached ca = { .what = CACHED_NONE };
	for (size_t i = 0; i < n && rc == 0; i++) {
		fast_timestamp_t x = stamps[i];
		int64_t *e = err ? &err[i] : NULL;
		int where;

		if (x & FTS_STAMP_CLOCK_TAG) {
			tagged_at(x, &ns[i], e);
		} else if (f && fresh_covers(f, x)) {
			fresh_at(f, x, &ns[i], e);
		} else if (v.old && x <= onewest) {
			rc = from_old(v.old, x, &ns[i], e);
		} else if ((where = locate(v.cur, p, newest, x, &ca)) == -ENODATA) {
			rc = -EAGAIN;
		} else if (where == 0 && !err && line_run(&ca.line, stamps, n, ns, &i, newest)) {
			continue;
		} else if (where < 0 && v.old) {   /* between the old history and this (rule 11) */
			rc = fts__bridge(&otail, &ca.line, x, &ns[i], e);
		} else if (where != 0 && (rc = live_reach(where, x, &ca.line, f, read)) < 0) {
			break;
		} else if (where > 0) {
			rc = past_newest(&ca.line, x, f, read, &ns[i], e);
		} else {
			rc = fts__line_convert(&ca.line, where, x, &ns[i], e);
		}
	}
	if ((again = fts__latch_again(v.cur, &rd)) > 0)
		goto retry;
	return again < 0 ? again : rc;
}

/* A counter stamp's bound also covers the counter's offsets between CPUs, as the warp
 * test found them (0 nearly always: nothing to do). -EAGAIN while the test could not
 * run: the offsets are unknown. */
static int add_skew(const fast_timestamp_t *stamps, size_t n, int64_t *err)
{
	int64_t skew = fts__clock_skew_ns();

	if (skew < 0)
		return -EAGAIN;
	for (size_t i = 0; skew && err && i < n; i++)
		if (!(stamps[i] & FTS_STAMP_CLOCK_TAG))
			err[i] = err[i] > INT64_MAX - skew ? INT64_MAX : err[i] + skew;
	return 0;
}

/* Ready the history for counter stamps up to newest. */
static int prepare(uint64_t newest)
{
	if (!FTS__HAVE_COUNTER && fts__clock_uses_hw())
		return -EINVAL;   /* a counter value on a build without a counter */
	return fts__clock_prepare(newest);
}

/* Every stamp tagged or on the fresh line (rule 12): no look-up. */
static void convert_fresh(const fast_timestamp_t *stamps, size_t n, int64_t *ns, int64_t *err,
			  const struct fresh_view *f, int tagged)
{
	const struct fts__line l = f->line;   /* a private copy: stores to ns cannot alias it */
	const int64_t skew = f->skew;

	if (!err && !tagged) {   /* the packet burst: one multiply a stamp */
		for (size_t i = 0; i < n; i++)
			ns[i] = fts__line_at(&l, stamps[i]);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		fast_timestamp_t x = stamps[i];

		if (x & FTS_STAMP_CLOCK_TAG) {
			tagged_at(x, &ns[i], err ? &err[i] : NULL);
			continue;
		}
		ns[i] = fts__line_at(&l, x);
		if (err)
			err[i] = (int64_t)(l.err + (uint64_t)fts__mulshift(x - l.c0, l.grow, l.shift)) +
				 1 + skew;
	}
}

static int convert_counter(int k, const fast_timestamp_t *stamps, size_t n, int64_t *ns,
			   int64_t *err)
{
	uint64_t newest = 0, beyond = 0;   /* the newest counter stamp; the newest after f */
	struct fts__line read;
	const struct fts_calib *h;
	struct fresh_view f;
	int have_counter = 0, tagged = 0, have_f = 0, covered = 1, have_read = 0, rc;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = stamps[i];
		if (x & FTS_STAMP_CLOCK_TAG) {
			tagged = 1;
			continue;
		}
		have_counter = 1;
		newest = x > newest ? x : newest;
	}
	/* The fresh line, where a stamp is past its read or the newest sample (stamps
	 * inside the history, most often, convert without it). */
	if (have_counter &&
	    (newest >= FTS__LD(fresh_of[k].c0) ||
	     ((h = fts__clock_history(k)) && newest > fts__calib_newest_counter(h))) &&
	    fresh_load(k, &f) && fresh_kept(&f)) {
		have_f = 1;
		for (size_t i = 0; i < n; i++) {
			uint64_t x = stamps[i];
			if (x & FTS_STAMP_CLOCK_TAG)
				continue;
			covered &= fresh_covers(&f, x);
			if (x > f.line.c1)
				beyond = x > beyond ? x : beyond;
		}
	} else {
		beyond = newest;
	}
	if (have_f && covered) {
		convert_fresh(stamps, n, ns, err, &f, tagged);
		return 0;
	}
	for (int tries = 0; tries < 3; tries++) {
		if (have_counter) {
			if ((rc = prepare(newest)) < 0)
				return rc;
			if (!fts__clock_holds(k))
				return -ENOTSUP;
			/* past the newest sample and the fresh line: a clock read after them */
			h = fts__clock_history(k);
			have_read = h && beyond > fts__calib_newest_counter(h) &&
				    fts__clock_fresh(k, beyond, &read) == 1;
		}
		rc = convert_many(k, stamps, n, ns, err, have_f ? &f : NULL, have_read ? &read : NULL);
		if (rc == 0 && have_counter)
			rc = add_skew(stamps, n, err);
		/* No history in view: another thread left the shared one after prepare(), and
		 * prepare() again waits for the process's. A shared history that kept moving:
		 * the clock leaves it (fts__clock_view). */
		if (rc == -ESTALE)
			continue;
		if (rc != -EAGAIN || !fts__clock_leave_shared("its state kept changing under a read"))
			return rc;
	}
	return rc == -ESTALE ? -EAGAIN : rc;
}

/* stamps to clock k: the counter stamps through the process clock's history of k (the
 * tagged ones as CLOCK_REALTIME), then, for another clock, the tagged ones. */
static int convert_checked(int k, const fast_timestamp_t *stamps, size_t n, int64_t *ns,
			   int64_t *err)
{
	int rc = convert_counter(k, stamps, n, ns, err);

	return rc == 0 && k != FTS__CLK_REALTIME ? fts__tagged_convert(k, stamps, n, ns, err) : rc;
}

/* One stamp to clock k: the hot path of fts_convert and fts_convert_clock. */
FTS__HOT static inline int convert_one(int k, const fast_timestamp_t *stamp, int64_t *ns,
				       int64_t *err_ns)
{
	struct fresh_view f;
	int64_t v, e;
	int rc;

	if (!stamp || !ns)
		return fts__fail(EINVAL);
	if ((*stamp & FTS_STAMP_CLOCK_TAG) && k == FTS__CLK_REALTIME) {
		*ns = clock_stamp_ns(*stamp);
		if (err_ns)
			*err_ns = 0;
		return 0;
	}
	/* rule 12: a fresh stamp, the common case (older ones convert without the line) */
	if (*stamp >= FTS__LD(fresh_of[k].c0) && !(*stamp & FTS_STAMP_CLOCK_TAG) &&
	    fresh_load(k, &f)) {
		if (fresh_covers(&f, *stamp) && fresh_kept(&f)) {
			fresh_at(&f, *stamp, ns, err_ns);
			if (err_ns)
				*err_ns += f.skew;
			return 0;
		}
		if (fresh_renew(k, &f, *stamp, ns, err_ns))
			return 0;
	}
	if ((rc = convert_checked(k, stamp, 1, &v, err_ns ? &e : NULL)) < 0)
		return fts__fail(-rc);
	*ns = v;
	if (err_ns)
		*err_ns = e;
	return 0;
}

FTS__HOT int fts_convert(const fast_timestamp_t *stamp, int64_t *ns, int64_t *err_ns)
{
	return convert_one(FTS__CLK_REALTIME, stamp, ns, err_ns);
}

FTS__HOT int fts_convert_clock(const fast_timestamp_t *stamp, clockid_t clock, int64_t *ns,
			       int64_t *err_ns)
{
	int k = fts__clk_of(clock);

	if (k < 0)
		return fts__fail(EINVAL);
	return convert_one(k, stamp, ns, err_ns);
}

static int convert_array(int k, const fast_timestamp_t *stamps, size_t n, int64_t *ns,
			 int64_t *err_ns)
{
	int rc;

	if (n == 0)
		return 0;
	if (!stamps || !ns)
		return fts__fail(EINVAL);
	if ((rc = convert_checked(k, stamps, n, ns, err_ns)) < 0)
		return fts__fail(-rc);
	return 0;
}

FTS__HOT int fts_convert_array(const fast_timestamp_t *stamps, size_t n, int64_t *ns, int64_t *err_ns)
{
	return convert_array(FTS__CLK_REALTIME, stamps, n, ns, err_ns);
}

FTS__HOT int fts_convert_array_clock(const fast_timestamp_t *stamps, size_t n, clockid_t clock,
				     int64_t *ns, int64_t *err_ns)
{
	int k = fts__clk_of(clock);

	if (k < 0)
		return fts__fail(EINVAL);
	return convert_array(k, stamps, n, ns, err_ns);
}

int fast_timestamp_to_timespec(const fast_timestamp_t *stamp, struct timespec *ts)
{
	int64_t ns, sec;

	if (!ts)
		return fts__fail(EINVAL);
	if (fts_convert(stamp, &ns, NULL) < 0)
		return -1;
	sec = ns / 1000000000;
	ns %= 1000000000;
	if (ns < 0) {   /* before 1970: keep tv_nsec in [0, 1e9) */
		ns += 1000000000;
		sec--;
	}
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)ns;
	return 0;
}

int fast_timestamp_to_timeval(const fast_timestamp_t *stamp, struct timeval *tv)
{
	struct timespec ts;

	if (!tv)
		return fts__fail(EINVAL);
	if (fast_timestamp_to_timespec(stamp, &ts) < 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
	return 0;
}

int fts_diff_ns(const fast_timestamp_t *earlier, const fast_timestamp_t *later, int64_t *ns)
{
	static int64_t mult;   /* ns per tick << 62, set once (racing setters agree) */
	uint64_t a, b, d;
	__int128 v;

	if (!earlier || !later || !ns)
		return fts__fail(EINVAL);
	a = *earlier;
	b = *later;
	if ((a | b) & FTS_STAMP_CLOCK_TAG || !FTS__HAVE_COUNTER) {
		int64_t x[2];
		fast_timestamp_t s[2] = { a, b };
		if (fts_convert_array(s, 2, x, NULL) < 0)
			return -1;
		v = (__int128)x[1] - x[0];
	} else {
		if (!__atomic_load_n(&mult, __ATOMIC_RELAXED)) {
			uint64_t hz = fts__freq(NULL, 0);
			if (!hz)
				return fts__fail(EAGAIN);
			__atomic_store_n(&mult, (int64_t)(((unsigned __int128)1000000000 << 62) / hz),
					 __ATOMIC_RELAXED);
		}
		d = b >= a ? b - a : a - b;
		v = (__int128)(((unsigned __int128)d * (uint64_t)__atomic_load_n(&mult, __ATOMIC_RELAXED)) >> 62);
		if (b < a)
			v = -v;
	}
	if (v > INT64_MAX || v < INT64_MIN)
		return fts__fail(ERANGE);
	*ns = (int64_t)v;
	return 0;
}

