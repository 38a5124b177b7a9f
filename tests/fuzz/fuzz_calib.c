/* fuzz_calib.c - libFuzzer target for the calibration history (fts_calib_*).
 *
 * The input is decoded into a history's options and a sequence of operations. Mode
 * byte (first byte, modulo 3):
 *   0  arbitrary: raw, relative and extreme samples (counters near 0 and UINT64_MAX,
 *      refs near INT64_MIN/MAX) interleaved with conversions at arbitrary counters;
 *   1  consistent: samples read from a simulated reference that is piecewise linear in
 *      the counter, its rate within +-500 ppm of a base and changing only at the
 *      instants the samples were read, with brackets of bounded width around them;
 *   2  consistent with steps: the rate fixed at the base, plus isolated clock steps
 *      of any size between samples (at most one per interval, none in the two
 *      intervals after a step).
 * Modes 1 and 2 keep inside the assumptions documented in faststamp.h (and the
 * reference advances at least 1 us between samples), so every probe between the
 * oldest and the newest sample held must convert to a bound that covers the truth.
 *
 * Invariants checked in every mode (violations trap, so libFuzzer reports a crash):
 *   - fts_calib_add succeeds exactly when faststamp.h says it should; when it fails,
 *     errno is EINVAL and the history is unchanged (count, range, and the conversions
 *     of a few probe counters are identical before and after);
 *   - fts_calib_count never exceeds max_samples;
 *   - fts_calib_convert returns 0 with err >= 0, or -1 with errno ENODATA (exactly
 *     when fewer than two samples are held), ERANGE or EINVAL;
 *   - fts_calib_range fails with ENODATA exactly when no sample is held, else
 *     oldest <= newest.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faststamp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "fuzz_calib: invariant failed at line %d: %s\n", \
				__LINE__, #cond);                                  \
			__builtin_trap();                                          \
		}                                                                  \
	} while (0)

/* FUZZ_CALIB_TRACE=1 prints every add and conversion, to read a crash input with. */
static int trace = -1;

/* ---- input decoding: exhausted input reads as zeros ------------------------------- */

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++) {
		uint64_t b = 0;
		if (in->n) {
			b = *in->p++;
			in->n--;
		}
		v |= b << (8 * i);
	}
	return v;
}

/* ---- snapshots: what a failed add must leave unchanged ---------------------------- */

#define NPROBE 8

struct conv {
	int rc, err_no;
	int64_t ns, err;
};

struct snap {
	size_t count;
	int range_rc, range_errno;
	uint64_t oldest, newest;
	struct conv p[NPROBE];
};

static void check_conv(const struct fts_calib *c, const struct conv *v)
{
	if (v->rc == 0) {
		CHECK(v->err >= 0);
		CHECK(fts_calib_count(c) >= 2);
	} else {
		CHECK(v->rc == -1);
		CHECK(v->err_no == ENODATA || v->err_no == ERANGE || v->err_no == EINVAL);
		CHECK((v->err_no == ENODATA) == (fts_calib_count(c) < 2));
	}
}

static struct conv convert(const struct fts_calib *c, uint64_t x)
{
	struct conv v = { 0, 0, INT64_MIN + 7, -7 };

	errno = 0;
	v.rc = fts_calib_convert(c, x, &v.ns, &v.err);
	v.err_no = v.rc ? errno : 0;
	check_conv(c, &v);
	if (v.rc) {  /* outputs untouched on failure */
		CHECK(v.ns == INT64_MIN + 7 && v.err == -7);
		v.ns = v.err = 0;
	} else {
		/* err_ns is optional and does not change the estimate. */
		int64_t ns2 = 0;
		CHECK(fts_calib_convert(c, x, &ns2, NULL) == 0 && ns2 == v.ns);
	}
	return v;
}

static void take_snap(const struct fts_calib *c, size_t cap, const uint64_t *extra,
		      struct snap *s)
{
	uint64_t at[NPROBE];

	memset(s, 0, sizeof(*s));
	s->count = fts_calib_count(c);
	CHECK(s->count <= cap);
	errno = 0;
	s->range_rc = fts_calib_range(c, &s->oldest, &s->newest);
	s->range_errno = s->range_rc ? errno : 0;
	if (s->range_rc) {
		CHECK(s->range_rc == -1 && s->range_errno == ENODATA && s->count == 0);
		s->oldest = s->newest = 0;
	} else {
		CHECK(s->count >= 1 && s->oldest <= s->newest);
		if (s->count == 1)
			CHECK(s->oldest == s->newest);
	}
	at[0] = 0;
	at[1] = UINT64_MAX;
	at[2] = s->oldest;
	at[3] = s->newest;
	at[4] = s->oldest + (s->newest - s->oldest) / 2;
	at[5] = s->newest + 1;
	at[6] = extra[0];
	at[7] = extra[1];
	for (int i = 0; i < NPROBE; i++)
		s->p[i] = convert(c, at[i]);
}

static int snap_equal(const struct snap *a, const struct snap *b)
{
	if (a->count != b->count || a->range_rc != b->range_rc ||
	    a->range_errno != b->range_errno || a->oldest != b->oldest || a->newest != b->newest)
		return 0;
	for (int i = 0; i < NPROBE; i++)
		if (a->p[i].rc != b->p[i].rc || a->p[i].err_no != b->p[i].err_no ||
		    a->p[i].ns != b->p[i].ns || a->p[i].err != b->p[i].err)
			return 0;
	return 1;
}

/* ---- the documented acceptance rule, modelled ------------------------------------- */

struct model {
	int have;
	uint64_t last_after, last_mid;
	int64_t last_ref;
};

static int model_accepts(const struct model *m, uint64_t before, uint64_t after)
{
	uint64_t mid = before + (after - before) / 2;
	if (before > after)
		return 0;
	return !m->have || (before >= m->last_after && mid > m->last_mid);
}

/* Add a sample and check the result against the model and the invariants.
 * Returns the add's return value. */
static int add(struct fts_calib *c, size_t cap, struct model *m, const uint64_t *extra,
	       uint64_t before, int64_t ref, uint64_t after)
{
	struct snap pre, post;
	int expect = model_accepts(m, before, after), rc;

	take_snap(c, cap, extra, &pre);
	errno = 0;
	rc = fts_calib_add(c, before, ref, after);
	if (trace)
		fprintf(stderr, "add %" PRIu64 " %" PRId64 " %" PRIu64 " -> %d (count %zu)\n",
			before, ref, after, rc, fts_calib_count(c));
	if (rc == 0) {
		CHECK(expect);
		m->have = 1;
		m->last_after = after;
		m->last_mid = before + (after - before) / 2;
		m->last_ref = ref;
		CHECK(fts_calib_count(c) >= 1 && fts_calib_count(c) <= cap);
		{
			uint64_t o, n;
			CHECK(fts_calib_range(c, &o, &n) == 0 && n == m->last_mid && o <= n);
		}
	} else {
		CHECK(rc == -1 && errno == EINVAL);
		CHECK(!expect);
	}
	take_snap(c, cap, extra, &post);
	if (rc)
		CHECK(snap_equal(&pre, &post));
	return rc;
}

/* ---- mode 0: arbitrary sequences ------------------------------------------------- */

static const uint64_t special_u64[] = {
	0, 1, 2, 3, 0x7fffffffffffffffULL, 0x8000000000000000ULL, 0x8000000000000001ULL,
	UINT64_MAX - 2, UINT64_MAX - 1, UINT64_MAX, 0xffffffffULL, 0x100000000ULL,
};
static const int64_t special_i64[] = {
	0, 1, -1, INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1,
	INT64_C(1) << 62, -(INT64_C(1) << 62), INT64_C(1700000000000000000),
};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void run_arbitrary(struct fts_calib *c, size_t cap, struct in *in, const uint64_t *extra)
{
	struct model m = { 0 };

	while (in->n) {
		unsigned op = (unsigned)take(in, 1) % 6;
		uint64_t before, after, x;
		int64_t ref;

		switch (op) {
		case 0:  /* raw */
			before = take(in, 8);
			ref = (int64_t)take(in, 8);
			after = take(in, 8);
			add(c, cap, &m, extra, before, ref, after);
			break;
		case 1: {  /* plausible: past the last sample, ref moving on */
			/* One take per statement: the input is read in a fixed order. */
			uint64_t gap = take(in, 4), w, dr;
			unsigned sh;
			gap <<= take(in, 1) % 40;
			w = take(in, 2);
			w <<= take(in, 1) % 24;
			dr = (uint64_t)(int64_t)(int32_t)take(in, 4);
			sh = (unsigned)take(in, 1) % 40;
			before = m.last_after + gap;
			after = before + w;
			ref = (int64_t)((uint64_t)m.last_ref + (dr << sh));
			add(c, cap, &m, extra, before, ref, after);
			break;
		}
		case 2: {  /* extremes */
			unsigned a = (unsigned)take(in, 1), b = (unsigned)take(in, 1);
			unsigned r = (unsigned)take(in, 1);
			before = special_u64[a % NELEM(special_u64)] + (a / NELEM(special_u64) % 4);
			after = special_u64[b % NELEM(special_u64)] - (b / NELEM(special_u64) % 4);
			ref = special_i64[r % NELEM(special_i64)];
			add(c, cap, &m, extra, before, ref, after);
			break;
		}
		case 3:  /* equal bracket ends, a tick past the last one */
			before = after = m.last_after + 1 + take(in, 1);
			ref = (int64_t)take(in, 8);
			add(c, cap, &m, extra, before, ref, after);
			break;
		case 4:  /* probe anywhere */
			x = take(in, 8);
			convert(c, x);
			break;
		default: {  /* probe near the held range */
			uint64_t o = 0, n = 0, off = take(in, 8);
			if (fts_calib_range(c, &o, &n) == 0) {
				switch (take(in, 1) % 3) {
				case 0: x = o + (n - o == UINT64_MAX ? off : off % (n - o + 1)); break;
				case 1: x = o - off % 4096; break;
				default: x = n + off % 4096; break;
				}
				convert(c, x);
			}
			break;
		}
		}
	}
}

/* ---- modes 1, 2: samples from a simulated truth ----------------------------------- */

#define MAX_TRUE 4096
#define Q 32  /* truth is kept in ns * 2^Q, exactly */

struct truth_pt {
	uint64_t t;          /* counter when the reference was read */
	__int128 T;          /* true reference there, ns * 2^Q */
	__int128 rate;       /* ns * 2^Q per tick, over the interval that ends here */
	uint64_t step_at;    /* first counter value after a step in that interval */
	__int128 step;       /* its size, ns * 2^Q; 0 = none */
};

static struct truth_pt pts[MAX_TRUE];

static __int128 floor_q(__int128 v)
{
	__int128 d = (__int128)1 << Q, q = v / d;
	if (v % d < 0)
		q--;
	return q;
}

/* True reference reading (ns) at counter x. */
static __int128 truth_at(size_t n, uint64_t x)
{
	size_t lo = 0, hi = n - 1;

	if (x <= pts[0].t) {
		__int128 rate = n > 1 ? pts[1].rate : pts[0].rate;
		return floor_q(pts[0].T - (__int128)(pts[0].t - x) * rate);
	}
	if (x >= pts[n - 1].t)
		return floor_q(pts[n - 1].T + (__int128)(x - pts[n - 1].t) * pts[n - 1].rate);
	/* Last point with t <= x; then x lies in the interval ending at pts[lo + 1]. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;
		if (pts[mid].t <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	{
		const struct truth_pt *e = &pts[lo + 1];
		__int128 v = pts[lo].T + (__int128)(x - pts[lo].t) * e->rate;
		if (e->step && x >= e->step_at)
			v += e->step;
		return floor_q(v);
	}
}

static void check_covers(const struct fts_calib *c, size_t n, uint64_t x)
{
	struct conv v = convert(c, x);
	__int128 tr, d;

	if (v.rc) {
		/* Inside the history only a result beyond int64 may fail. */
		CHECK(v.err_no == ERANGE);
		return;
	}
	tr = truth_at(n, x);
	if (trace)
		fprintf(stderr, "probe %" PRIu64 ": %" PRId64 " +- %" PRId64 ", truth %" PRId64 "\n",
			x, v.ns, v.err, (int64_t)tr);
	d = (__int128)v.ns - tr;
	if (d < 0)
		d = -d;
	if (d > v.err) {
		fprintf(stderr,
			"fuzz_calib: bound misses truth at counter %" PRIu64 ": ns %" PRId64
			" err %" PRId64 " truth %" PRId64 " (off by %" PRId64 ")\n",
			x, v.ns, v.err, (int64_t)tr, (int64_t)d);
		__builtin_trap();
	}
}

static void probe_range(const struct fts_calib *c, size_t n, uint64_t sel)
{
	uint64_t o, nw;

	if (fts_calib_count(c) < 2 || fts_calib_range(c, &o, &nw))
		return;
	check_covers(c, n, o);
	check_covers(c, n, nw);
	check_covers(c, n, o + (nw - o == UINT64_MAX ? sel : sel % (nw - o + 1)));
}

static void run_consistent(struct fts_calib *c, size_t cap, struct in *in, int steps,
			   const uint64_t *extra)
{
	struct model m = { 0 };
	/* Base rate: ns per tick in Q32, from 2^-32 up to ~2^23 (any counter frequency). */
	__int128 base = (__int128)(take(in, 2) | 1), T, lim = (__int128)INT64_MAX << Q;
	uint64_t t, wmax;
	/* A step is told from a slew by the rate of the intervals around it: the first
	 * one comes after three clean intervals (with fewer, which interval holds the
	 * step is ambiguous, and the bound then assumes none). */
	unsigned since_step = 0;
	size_t n = 0;

	base <<= take(in, 1) % 40;
	wmax = (uint64_t)1 << (take(in, 1) % 20);

	switch (take(in, 1) % 3) {
	case 0: t = take(in, 2) + wmax; break;
	case 1: t = take(in, 8) / 2; break;
	default: t = UINT64_MAX - take(in, 5); break;
	}
	T = (__int128)(int64_t)take(in, 8) * ((__int128)1 << Q);

	while (in->n && n < MAX_TRUE) {
		uint64_t a = take(in, 4) % (wmax + 1), b, gap;
		b = take(in, 4) % (wmax + 1);
		gap = take(in, 4);
		gap <<= take(in, 1) % 24;
		/* With steps the rate stays at the base: a step interval then runs at its
		 * neighbours' rate, as the bound assumes. */
		int ppm = steps ? 0 : (int)(take(in, 2) % 1001) - 500;
		unsigned flags = (unsigned)take(in, 1);

		__int128 rate = base + base * ppm / 1000000, step = 0;
		uint64_t step_at = 0, nt;
		int64_t ref;

		if (n == 0) {
			if (t < a || UINT64_MAX - t < b)
				return;
			nt = t;
		} else {
			if (m.last_after == UINT64_MAX || UINT64_MAX - m.last_after - 1 < a ||
			    UINT64_MAX - (m.last_after + 1 + a) < gap)
				return;
			/* The reference advances at least 1 us between samples: with a
			 * reference that stands still over an interval (slope 0) the rate is
			 * unknowable at its 1 ns resolution, outside what the bound models. */
			if ((__int128)gap * base < ((__int128)1000 << Q))
				gap = (uint64_t)((((__int128)1000 << Q) + base - 1) / base);
			if (UINT64_MAX - (m.last_after + 1 + a) < gap)
				return;
			nt = m.last_after + 1 + a + gap;
			if (UINT64_MAX - nt < b)
				return;
			if (steps && (flags & 1) && since_step >= 3) {
				/* A step between the two brackets. */
				uint64_t lo = m.last_after + 1, hi = nt - a;
				step = (__int128)(int32_t)take(in, 4);
				step *= (__int128)1 << (take(in, 1) % 24 + Q);
				step_at = lo + take(in, 8) % (hi - lo + 1);
			}
			T += (__int128)(nt - pts[n - 1].t) * rate + step;
		}
		if (step)
			since_step = 0;
		else if (since_step < 3)
			since_step++;
		if (T > lim || T < -lim)
			return;
		ref = (int64_t)floor_q(T);
		if (trace)
			fprintf(stderr, "truth: counter %" PRIu64 " ref %" PRId64 " rate %.9Lf ns/tick"
				" step %.1Lf ns at %" PRIu64 "\n", nt, ref,
				(long double)rate / 0x1p32L, (long double)step / 0x1p32L, step_at);
		pts[n] = (struct truth_pt){ .t = nt, .T = T, .rate = n ? rate : base,
					    .step_at = step_at, .step = step };
		n++;
		CHECK(add(c, cap, &m, extra, nt - a, ref, nt + b) == 0);
		probe_range(c, n, take(in, 8));
	}
	/* A sweep over the whole held range, and both sides of every step. */
	if (n >= 2 && fts_calib_count(c) >= 2) {
		uint64_t o, nw;
		CHECK(fts_calib_range(c, &o, &nw) == 0);
		for (int i = 0; i <= 64; i++)
			check_covers(c, n, o + (uint64_t)((unsigned __int128)(nw - o) * i / 64));
		for (size_t i = 0; i < n; i++) {
			uint64_t pt[4] = { pts[i].t, pts[i].t + 1, pts[i].step_at - 1, pts[i].step_at };
			for (int j = 0; j < (pts[i].step ? 4 : 2); j++)
				if (pt[j] >= o && pt[j] <= nw)
					check_covers(c, n, pt[j]);
		}
	}
}

/* ---- entry ------------------------------------------------------------------------ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	unsigned mode = (unsigned)take(&in, 1) % 3;
	unsigned ms = (unsigned)take(&in, 1), tolb = (unsigned)take(&in, 1);
	unsigned flags = (unsigned)take(&in, 1);
	uint64_t extra[2];
	struct fts_calib_opts opts;
	struct fts_calib *c;
	size_t cap;
	int64_t ns;
	uint64_t o, nw;

	if (trace < 0)
		trace = getenv("FUZZ_CALIB_TRACE") != NULL;
	extra[0] = take(&in, 8);
	extra[1] = take(&in, 8);
	memset(&opts, 0, sizeof(opts));
	opts.size = sizeof(opts);
	opts.max_samples = ms;
	opts.rate_tol_ppb = tolb * tolb * 16;
	if (flags & 1)  /* an older, shorter options struct without rate_tol_ppb */
		opts.size = offsetof(struct fts_calib_opts, max_samples) + sizeof(size_t);
	if (flags & 2)  /* too short to hold max_samples */
		opts.size = offsetof(struct fts_calib_opts, max_samples);

	errno = 0;
	c = fts_calib_new_opts((flags & 4) ? NULL : &opts);
	if (!(flags & 4) && ((flags & 2) || (ms > 0 && ms < 16))) {
		CHECK(c == NULL && errno == EINVAL);
		return 0;
	}
	CHECK(c != NULL);
	cap = ((flags & 4) || ms == 0) ? SIZE_MAX : ms;

	/* Empty history, and NULL arguments. */
	CHECK(fts_calib_count(c) == 0 && fts_calib_count(NULL) == 0);
	errno = 0;
	CHECK(fts_calib_convert(c, extra[0], &ns, NULL) == -1 && errno == ENODATA);
	errno = 0;
	CHECK(fts_calib_range(c, &o, &nw) == -1 && errno == ENODATA);
	errno = 0;
	CHECK(fts_calib_add(NULL, 0, 0, 0) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(fts_calib_convert(NULL, 0, &ns, NULL) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(fts_calib_convert(c, 0, NULL, NULL) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(fts_calib_range(c, NULL, &nw) == -1 && errno == EINVAL);

	if (mode == 0)
		run_arbitrary(c, cap, &in, extra);
	else
		run_consistent(c, cap, &in, mode == 2, extra);

	CHECK(fts_calib_count(c) <= cap);
	fts_calib_free(c);
	return 0;
}
