/* convert.c - stamps and their conversion through the process clock's histories
 * (clock.c keeps them up to date; rule 11's bridge, history.h) and rule 12's line
 * (fresh.h). */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"
#include "history.h"
#include "clock.h"
#include "fresh.h"
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
static int past_newest(const struct fts__line *tail, uint64_t x, const struct fts__fresh_view *f,
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
FTS__HOT __attribute__((noinline)) static int live_reach(int where, uint64_t x,
							  const struct fts__line *l,
							  const struct fts__fresh_view *f,
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
	return fts__estimate_reach_live(raw, raw_err, ahead, fts__clock_skew_ns()) ? 0 : -ERANGE;
}

/* A stamp of the history used before this one (a copy of a shared history the clock
 * left), which no one writes. Rare: out of the hot section and of convert_many's frame. */
__attribute__((noinline, cold)) static int from_old(const struct fts_calib *old, uint64_t x,
						    int64_t *ns, int64_t *err)
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
 * (fts__fresh_read_after), for the others past the newest sample. Tagged stamps give their
 * CLOCK_REALTIME reading. -EAGAIN when a history another process writes kept moving;
 * -ESTALE for a counter stamp with no history in view (another thread left the shared
 * one and is making the process's). Not inlined: its frame spans some 20 cache lines,
 * which convert_counter's callers then do not write unless it runs. */
__attribute__((noinline)) static int convert_many(int k, const fast_timestamp_t *stamps, size_t n,
						  int64_t *ns, int64_t *err,
						  const struct fts__fresh_view *f,
						  const struct fts__line *read)
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
		} else if (f && fts__fresh_covers(f, x)) {
			fts__fresh_at(f, x, &ns[i], e);
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
			  const struct fts__fresh_view *f, int tagged)
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
	struct fts__fresh_view f;
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
	    (newest >= fts__fresh_from(k) ||
	     ((h = fts__clock_history(k)) && newest > fts__calib_newest_counter(h))) &&
	    fts__fresh_load(k, &f) && fts__fresh_kept(&f)) {
		have_f = 1;
		for (size_t i = 0; i < n; i++) {
			uint64_t x = stamps[i];
			if (x & FTS_STAMP_CLOCK_TAG)
				continue;
			covered &= fts__fresh_covers(&f, x);
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
				    fts__fresh_read_after(k, beyond, &read) == 1;
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

/* One counter stamp x inside the history in view, or before it (an old stamp: no clock
 * read), the common case after the fresh line: convert_counter's work for it alone, in a
 * frame of a few lines (convert_many's, for any batch, spans about 20), with the look-up
 * inlined (flatten) into the hot section, so that a conversion after idle brings back
 * as few lines and pages as it can; itself out of line (noinline), so that a fresh
 * stamp's path (convert_one, FTS__PATH 1-4) stays in two pages in every build. 0 with
 * *ns and *err (err may be NULL), or -errno as
 * convert_counter; 1 for what it leaves to convert_counter (a stamp past the newest
 * sample, a history left behind, one that kept moving). */
FTS__PATH(5) __attribute__((flatten, noinline)) static int convert_old_one(int k, uint64_t x, int64_t *ns, int64_t *err)
{
	struct fts__clock_view v;
	struct fts__reading rd = { 0 };
	struct fts__line l;
	int rc, where, again;

	if ((rc = prepare(x)) < 0)
		return rc;
	if (!fts__clock_holds(k))
		return -ENOTSUP;
	fts__clock_view(k, &v);
	if (!v.cur || v.old)
		return 1;
	do {
		where = fts__pub_lookup(v.cur, fts__latch_read(v.cur, &rd), x, &l);
		if (where == 0 || where == -1) {
			rc = where < 0 ? live_reach(where, x, &l, NULL, NULL) : 0;
			if (rc == 0)
				rc = fts__line_convert(&l, where, x, ns, err);
		}
	} while ((again = fts__latch_again(v.cur, &rd)) > 0);
	if (again < 0 || (where != 0 && where != -1))
		return 1;
	return rc < 0 ? rc : add_skew(&x, 1, err);
}

/* One stamp to clock k: the hot path of fts_convert and fts_convert_clock. */
FTS__PATH(1) static inline int convert_one(int k, const fast_timestamp_t *stamp, int64_t *ns,
				       int64_t *err_ns)
{
	struct fts__fresh_view f;
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
	if (*stamp >= fts__fresh_from(k) && !(*stamp & FTS_STAMP_CLOCK_TAG) &&
	    fts__fresh_load(k, &f)) {
		if (fts__fresh_covers(&f, *stamp) && fts__fresh_kept(&f)) {
			fts__fresh_at(&f, *stamp, ns, err_ns);
			if (err_ns)
				*err_ns += f.skew;
			return 0;
		}
		if (fts__fresh_renew(k, &f, *stamp, ns, err_ns))
			return 0;
	} else if (!(*stamp & FTS_STAMP_CLOCK_TAG) &&
		   (rc = convert_old_one(k, *stamp, &v, err_ns ? &e : NULL)) <= 0) {
		if (rc < 0)
			return fts__fail(-rc);
		*ns = v;
		if (err_ns)
			*err_ns = e;
		return 0;
	}
	if ((rc = convert_checked(k, stamp, 1, &v, err_ns ? &e : NULL)) < 0)
		return fts__fail(-rc);
	*ns = v;
	if (err_ns)
		*err_ns = e;
	return 0;
}

FTS__PATH(0) FTS__PATH_START int fts_convert(const fast_timestamp_t *stamp, int64_t *ns, int64_t *err_ns)
{
	return convert_one(FTS__CLK_REALTIME, stamp, ns, err_ns);
}

FTS__PATH(6) int fts_convert_clock(const fast_timestamp_t *stamp, clockid_t clock, int64_t *ns,
			       int64_t *err_ns)
{
	int k = fts__hw_clk_of(clock);

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
	int k = fts__hw_clk_of(clock);

	if (k < 0)
		return fts__fail(EINVAL);
	return convert_array(k, stamps, n, ns, err_ns);
}

FTS__PATH(1) int fast_timestamp_to_timespec(const fast_timestamp_t *stamp, struct timespec *ts)
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

FTS__PATH(1) int fast_timestamp_to_timeval(const fast_timestamp_t *stamp, struct timeval *tv)
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

