/* clock.c - stamps and their conversion through the process history (sample.c keeps
 * it fresh). */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"
#include "history.h"

fast_timestamp_t fts__clock_stamp(void)
{
	int saved = errno;
	struct timespec ts;
	int64_t ns;

	clock_gettime(CLOCK_REALTIME, &ts);
	errno = saved;
	ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return ((uint64_t)ns & ~FTS_STAMP_CLOCK_TAG) | FTS_STAMP_CLOCK_TAG;
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

/* Convert stamps[0..n) into ns/err (err may be NULL) with the process clock's
 * histories (fts__clock_view): the one in use, and the one used before it, if any.
 * fresh, if not NULL, is a clock read after every stamp (fts__clock_fresh), for those
 * past the newest sample. -EAGAIN when a history another process writes kept moving;
 * -ESTALE for a counter stamp with no history in view (another thread left the shared
 * one and is making the process's). */
static int convert_many(const fast_timestamp_t *stamps, size_t n, int64_t *ns, int64_t *err,
			const struct fts__line *fresh)
{
	struct fts__clock_view v;
	struct fts__line seg, otail;
	uint64_t newest, onewest = 0;
	unsigned latch, tries = 0;
	int rc;

	fts__clock_view(&v);
	if (!v.cur) {   /* no history yet: only tagged stamps can be converted */
		for (size_t i = 0; i < n; i++) {
			if (!(stamps[i] & FTS_STAMP_CLOCK_TAG))
				return -ESTALE;
			ns[i] = clock_stamp_ns(stamps[i]);
			if (err)
				err[i] = 0;
		}
		return 0;
	}
	if (v.old) {   /* a copy: no one writes it */
		onewest = fts__calib_newest_counter(v.old);
		fts__calib_find(v.old, onewest + 1, &otail);
	}
retry:
	if (v.cur->bounded && tries++ == FTS__MAX_RETRIES)
		return -EAGAIN;
	latch = fts__latch_begin(v.cur);
	rc = 0;
	newest = FTS__LD(fts__pub_of(v.cur, latch)->newest);
	seg.c0 = 1;   /* no segment cached yet: c0 > c1 */
	seg.c1 = 0;
	seg.grow = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		fast_timestamp_t x = stamps[i];
		int64_t *e = err ? &err[i] : NULL;
		struct fts__line ol;
		int where;

		if (x & FTS_STAMP_CLOCK_TAG) {
			ns[i] = clock_stamp_ns(x);
			if (e)
				*e = 0;
			continue;
		}
		if (v.old && x <= onewest) {
			where = fts__calib_find(v.old, x, &ol);
			rc = where == -ENODATA ? -EAGAIN : fts__line_convert(&ol, where, x, &ns[i], e);
			continue;
		}
		/* Sorted batches stay in one segment (or past the newest): no look-up. */
		if (!seg.grow && inside(&seg, x, newest)) {
			if (!err && line_run(&seg, stamps, n, ns, &i, newest))
				continue;
			where = 0;
		} else if (seg.grow && x > newest && seg.c0 == newest) {
			where = 1;
		} else if ((where = fts__pub_lookup(v.cur, fts__pub_of(v.cur, latch), x, &seg)) == -ENODATA) {
			rc = -EAGAIN;
			break;
		}
		if (where < 0 && v.old)
			rc = fts__bridge(&otail, &seg, x, &ns[i], e);
		else if (where > 0 && fresh)
			rc = fts__bridge(&seg, fresh, x, &ns[i], e);
		else
			rc = fts__line_convert(&seg, where, x, &ns[i], e);
		if (where < 0) {  /* a line cached from before the history is no use */
			seg.c0 = 1;
			seg.c1 = 0;
			seg.grow = 0;
		}
	}
	if (fts__latch_retry(v.cur, latch))
		goto retry;
	return rc;
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

static int convert_checked(const fast_timestamp_t *stamps, size_t n, int64_t *ns, int64_t *err)
{
	uint64_t newest = 0;
	struct fts__line fresh;
	int have_counter = 0, have_fresh = 0, rc;

	for (size_t i = 0; i < n; i++) {
		if (stamps[i] & FTS_STAMP_CLOCK_TAG)
			continue;
		have_counter = 1;
		if (stamps[i] > newest)
			newest = stamps[i];
	}
	for (int tries = 0; tries < 3; tries++) {
		if (have_counter) {
			const struct fts_calib *h;
			if ((rc = prepare(newest)) < 0)
				return rc;
			/* past the newest sample: a clock read after the stamps */
			h = fts__clock_history();
			have_fresh = h && newest > fts__calib_newest_counter(h) &&
				     fts__clock_fresh(newest, &fresh) == 1;
		}
		rc = convert_many(stamps, n, ns, err, have_fresh ? &fresh : NULL);
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

int fts_convert(const fast_timestamp_t *stamp, int64_t *ns, int64_t *err_ns)
{
	int64_t v, e;
	int rc;

	if (!stamp || !ns)
		return fts__fail(EINVAL);
	if (*stamp & FTS_STAMP_CLOCK_TAG) {
		*ns = clock_stamp_ns(*stamp);
		if (err_ns)
			*err_ns = 0;
		return 0;
	}
	if ((rc = convert_checked(stamp, 1, &v, err_ns ? &e : NULL)) < 0)
		return fts__fail(-rc);
	*ns = v;
	if (err_ns)
		*err_ns = e;
	return 0;
}

int fts_convert_array(const fast_timestamp_t *stamps, size_t n, int64_t *ns, int64_t *err_ns)
{
	int rc;

	if (n == 0)
		return 0;
	if (!stamps || !ns)
		return fts__fail(EINVAL);
	if ((rc = convert_checked(stamps, n, ns, err_ns)) < 0)
		return fts__fail(-rc);
	return 0;
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

