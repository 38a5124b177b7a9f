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

/* x's bound widened by slack, unless that overflows. */
static int widen(int64_t *err, int64_t slack)
{
	if (*err > INT64_MAX - slack)
		return -ERANGE;
	*err += slack;
	return 0;
}

/* Convert stamps[0..n) into ns/err (err may be NULL); the history is prepared. A stamp
 * past the newest sample gets tail_slack more bound (see fts__clock_check). */
static int convert_many(const fast_timestamp_t *stamps, size_t n, int64_t *ns, int64_t *err,
			int64_t tail_slack)
{
	const struct fts_calib *h = fts__clock_history();
	struct fts__line seg;
	uint64_t newest;
	unsigned seq;
	int rc;

	if (!h) {   /* no history yet: only tagged stamps can be converted */
		for (size_t i = 0; i < n; i++) {
			if (!(stamps[i] & FTS_STAMP_CLOCK_TAG))
				return -EAGAIN;
			ns[i] = clock_stamp_ns(stamps[i]);
			if (err)
				err[i] = 0;
		}
		return 0;
	}
retry:
	seq = fts__calib_read_begin(h);
	rc = 0;
	newest = fts__calib_newest_counter(h);
	seg.c0 = 1;   /* no interval cached yet: c0 > c1 */
	seg.c1 = 0;
	seg.grow = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		fast_timestamp_t x = stamps[i];
		int where;

		if (x & FTS_STAMP_CLOCK_TAG) {
			ns[i] = clock_stamp_ns(x);
			if (err)
				err[i] = 0;
			continue;
		}
		/* Sorted batches stay in one segment (or past the newest): no look-up. */
		if (!seg.grow && inside(&seg, x, newest)) {
			if (!err && line_run(&seg, stamps, n, ns, &i, newest))
				continue;
			where = 0;
		} else if (seg.grow && x > newest && seg.c0 == newest) {
			where = 1;
		} else if ((where = fts__calib_lookup(h, x, &seg)) == -ENODATA) {
			rc = -EAGAIN;
		}
		if (rc == 0)
			rc = fts__line_convert(&seg, where, x, &ns[i], err ? &err[i] : NULL);
		if (rc == 0 && where > 0 && err)
			rc = widen(&err[i], tail_slack);
		if (where < 0) {  /* a line cached from before the history is no use */
			seg.c0 = 1;
			seg.c1 = 0;
			seg.grow = 0;
		}
	}
	if (fts__calib_read_retry(h, seq))
		goto retry;
	return rc;
}

/* Ready the history for counter stamps up to newest. */
static int prepare(uint64_t newest)
{
	if (!FTS__HAVE_COUNTER && fts__clock_uses_hw())
		return -EINVAL;   /* a counter value on a build without a counter */
	return fts__clock_prepare(newest);
}

/* The newest stamp x past the history: check the clock after it (fts__clock_check);
 * the slack its stamps' bounds need, and x's interval in seg. */
static int check_tail(uint64_t x, struct fts__line *seg, int64_t *slack)
{
	const struct fts_calib *h = fts__clock_history();
	int where = fts__calib_find(h, x, seg);

	*slack = 0;
	if (where > 0 && fts__clock_check(x, seg, slack) == 1)
		where = fts__calib_find(h, x, seg);
	return where;
}

static int convert_checked(const fast_timestamp_t *stamps, size_t n, int64_t *ns, int64_t *err)
{
	uint64_t newest = 0;
	int64_t slack = 0;
	struct fts__line seg;
	int have_counter = 0, rc;

	for (size_t i = 0; i < n; i++) {
		if (stamps[i] & FTS_STAMP_CLOCK_TAG)
			continue;
		have_counter = 1;
		if (stamps[i] > newest)
			newest = stamps[i];
	}
	if (have_counter) {
		if ((rc = prepare(newest)) < 0)
			return rc;
		if (fts__clock_history())
			check_tail(newest, &seg, &slack);
	}
	return convert_many(stamps, n, ns, err, slack);
}

int fts_convert(const fast_timestamp_t *stamp, int64_t *ns, int64_t *err_ns)
{
	struct fts__line seg;
	fast_timestamp_t x;
	int64_t v, e, slack;
	int where, rc;

	if (!stamp || !ns)
		return fts__fail(EINVAL);
	x = *stamp;
	if (x & FTS_STAMP_CLOCK_TAG) {
		*ns = clock_stamp_ns(x);
		if (err_ns)
			*err_ns = 0;
		return 0;
	}
	/* One stamp: the array path without its loop. */
	if ((rc = prepare(x)) < 0)
		return fts__fail(-rc);
	where = check_tail(x, &seg, &slack);
	if (where == -ENODATA)
		rc = -EAGAIN;
	else
		rc = fts__line_convert(&seg, where, x, &v, err_ns ? &e : NULL);
	if (rc == 0 && where > 0 && err_ns)
		rc = widen(&e, slack);
	if (rc < 0)
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

