/* test_api.c - the public conversion API: bad input, tagged stamps, timeval and
 * timespec rounding, arrays, differences, and the process clock on a simulated
 * counter and clock (through the test seam). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "faststamp.h"
#include "internal.h"
#include "sim.h"

static fast_timestamp_t tagged(int64_t ns)
{
	return ((uint64_t)ns & ~FTS_STAMP_CLOCK_TAG) | FTS_STAMP_CLOCK_TAG;
}

static void null_arguments(void **state)
{
	fast_timestamp_t s = tagged(1);
	struct timespec ts = { 5, 6 };
	struct timeval tv = { 7, 8 };
	int64_t ns = 9, arr[2];
	(void)state;

	errno = 0;
	assert_int_equal(fast_timestamp_to_timespec(NULL, &ts), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fast_timestamp_to_timespec(&s, NULL), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fast_timestamp_to_timeval(NULL, &tv), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fast_timestamp_to_timeval(&s, NULL), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fts_convert(NULL, &ns, NULL), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fts_convert(&s, NULL, NULL), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fts_convert_array(NULL, 2, arr, NULL), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fts_convert_array(&s, 1, NULL, NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fts_convert_array(NULL, 0, NULL, NULL), 0);
	errno = 0;
	assert_int_equal(fts_diff_ns(NULL, &s, &ns), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fts_diff_ns(&s, &s, NULL), -1);
	assert_int_equal(fts_get_info(NULL), -1);
	struct fts_info tiny = { .size = 1 };
	assert_int_equal(fts_get_info(&tiny), -1);
	assert_int_equal(errno, EINVAL);
	/* outputs untouched */
	assert_int_equal(ts.tv_sec, 5);
	assert_int_equal(tv.tv_usec, 8);
	assert_int_equal(ns, 9);
}

static void tagged_stamps_are_exact(void **state)
{
	static const struct { int64_t ns; long sec, nsec, usec; } t[] = {
		{ 1798761600123456789, 1798761600, 123456789, 123456 },
		{ 999, 0, 999, 0 },
		{ 1999, 0, 1999, 1 },
		{ -1, -1, 999999999, 999999 },         /* just before 1970 */
		{ -1000000001, -2, 999999999, 999999 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		fast_timestamp_t s = tagged(t[i].ns);
		struct timespec ts;
		struct timeval tv;
		int64_t ns, err;
		assert_int_equal(fts_convert(&s, &ns, &err), 0);
		assert_int_equal(ns, t[i].ns);
		assert_int_equal(err, 0);
		assert_int_equal(fast_timestamp_to_timespec(&s, &ts), 0);
		assert_int_equal(ts.tv_sec, t[i].sec);
		assert_int_equal(ts.tv_nsec, t[i].nsec);
		assert_int_equal(fast_timestamp_to_timeval(&s, &tv), 0);
		assert_int_equal(tv.tv_sec, t[i].sec);
		assert_int_equal(tv.tv_usec, t[i].usec);
	}
}

static void store_keeps_errno(void **state)
{
	fast_timestamp_t s = 0, r = 0;
	(void)state;
	errno = 12345;
	store_fast_timestamp(&s);
	fts_store_relaxed(&r);
	assert_int_equal(errno, 12345);
	assert_true(s != 0 && r != 0);
	assert_int_equal(sizeof(fast_timestamp_t), 8);
}

/* ---- the process clock on a simulated counter and clock --------------------------- */

struct simsrc {
	struct sim s;
	uint64_t t;        /* counter now */
	uint64_t step;     /* ticks per counter read */
	int fail;          /* realtime reports an error */
};

static uint64_t sim_counter(void *ctx)
{
	struct simsrc *x = ctx;
	x->t += x->step;
	return x->t;
}

static int sim_realtime(void *ctx, int64_t *ns)
{
	struct simsrc *x = ctx;
	if (x->fail)
		return -EIO;
	x->t += x->step;
	*ns = sim_truth(&x->s, x->t);
	return 0;
}

static void sim_sleep(void *ctx, int64_t ns)
{
	struct simsrc *x = ctx;
	x->t += (uint64_t)(ns * 26 / 10);
}

static struct simsrc src;

static void use_sim(uint64_t seed)
{
	struct fts__source s = { sim_counter, sim_realtime, sim_sleep, &src, 1 };
	memset(&src, 0, sizeof(src));
	src.t = 1000000;
	src.step = 30;
	sim_init(&src.s, 0, 1798761600e9L, 1 / 2.6L * (1 + 100e-6L), seed);
	fts__clock_set_source(&s);
}

static void process_clock_on_sim(void **state)
{
	fast_timestamp_t st[1000];
	int64_t ns[1000], err[1000];
	(void)state;

	use_sim(1);
	for (int i = 0; i < 1000; i++) {
		st[i] = src.t;
		src.t += 2600000 + (uint64_t)i * 997;   /* ~1 ms apart */
		if (i % 100 == 99) {   /* converting as we go keeps the history fresh */
			int64_t v;
			assert_int_equal(fts_convert(&st[i], &v, NULL), 0);
		}
	}
	assert_int_equal(fts_convert_array(st, 1000, ns, err), 0);
	for (int i = 0; i < 1000; i++) {
		int64_t truth = sim_truth(&src.s, st[i]), miss = ns[i] > truth ? ns[i] - truth : truth - ns[i];
		assert_true(miss <= err[i]);
		/* the array gives what single conversions give */
		int64_t one, e1;
		assert_int_equal(fts_convert(&st[i], &one, &e1), 0);
		assert_int_equal(one, ns[i]);
		assert_int_equal(e1, err[i]);
	}
	/* arrays in any order */
	fast_timestamp_t rev[3] = { st[900], st[10], st[500] };
	int64_t rns[3];
	assert_int_equal(fts_convert_array(rev, 3, rns, NULL), 0);
	assert_int_equal(rns[0], ns[900]);
	assert_int_equal(rns[1], ns[10]);
	assert_int_equal(rns[2], ns[500]);
	/* a stamp newer than the newest sample makes the conversion take one */
	uint64_t before = fts__clock_samples_taken();
	fast_timestamp_t fresh = src.t + 26000000;
	src.t += 52000000;
	int64_t v, e;
	assert_int_equal(fts_convert(&fresh, &v, &e), 0);
	assert_true(fts__clock_samples_taken() > before);
	int64_t truth = sim_truth(&src.s, fresh);
	assert_true((v > truth ? v - truth : truth - v) <= e);
	fts__clock_set_source(NULL);
}

static void reference_clock_failure(void **state)
{
	fast_timestamp_t s = 5000000;
	int64_t ns = 1, err = 2;
	(void)state;

	use_sim(2);
	src.fail = 1;
	errno = 0;
	assert_int_equal(fts_convert(&s, &ns, &err), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(ns, 1);
	/* once the clock works again, so do conversions */
	src.fail = 0;
	assert_int_equal(fts_convert(&s, &ns, &err), 0);
	/* a failing clock later only stops refreshing: old history still converts */
	src.fail = 1;
	s = src.t + 100000000;
	src.t += 200000000;
	assert_int_equal(fts_convert(&s, &ns, &err), 0);
	int64_t truth = sim_truth(&src.s, s);
	assert_true((ns > truth ? ns - truth : truth - ns) <= err);
	fts__clock_set_source(NULL);
}

static void diff_of_stamps(void **state)
{
	fast_timestamp_t a = tagged(1000), b = tagged(4500), c, d;
	int64_t ns;
	struct timespec pause = { 0, 20000000 };
	int64_t t0, t1;
	(void)state;

	assert_int_equal(fts_diff_ns(&a, &b, &ns), 0);
	assert_int_equal(ns, 3500);
	assert_int_equal(fts_diff_ns(&b, &a, &ns), 0);
	assert_int_equal(ns, -3500);
	/* real stamps 20 ms apart, against CLOCK_MONOTONIC */
	t0 = 0;
	{
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = ts.tv_sec * 1000000000LL + ts.tv_nsec;
		store_fast_timestamp(&c);
		nanosleep(&pause, NULL);
		store_fast_timestamp(&d);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t1 = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
	assert_int_equal(fts_diff_ns(&c, &d, &ns), 0);
	assert_true(ns >= 20000000 && ns <= t1 - t0 + 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(null_arguments),
		cmocka_unit_test(tagged_stamps_are_exact),
		cmocka_unit_test(store_keeps_errno),
		cmocka_unit_test(process_clock_on_sim),
		cmocka_unit_test(reference_clock_failure),
		cmocka_unit_test(diff_of_stamps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
