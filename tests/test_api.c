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

#include "testmain.h"

#include "faststamp.h"
#include "internal.h"
#include "simclock.h"
#include "clock.h"

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
	/* A size never set: 0 in a zeroed struct, or stack garbage such as a pointer. */
	static const size_t unset[] = { 0, 65537, (size_t)0x7ffd12345678, SIZE_MAX };
	for (size_t k = 0; k < sizeof(unset) / sizeof(unset[0]); k++) {
		struct fts_info g;
		memset(&g, 0xa5, sizeof(g));
		g.size = unset[k];
		errno = 0;
		assert_int_equal(fts_get_info(&g), -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal((unsigned char)g.backend[0], 0xa5);
	}
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

static void process_clock_on_sim(void **state)
{
	fast_timestamp_t st[1000];
	int64_t truth[1000], ns[1000], err[1000];
	(void)state;

	simc_use(1, 100);
	for (int i = 0; i < 1000; i++) {
		st[i] = simc_stamp(&truth[i]);
		simc_advance(1e6L + i * 383);   /* ~1 ms apart */
		if (i % 100 == 99) {   /* converting as we go keeps the history fresh */
			int64_t v;
			assert_int_equal(fts_convert(&st[i], &v, NULL), 0);
		}
	}
	assert_int_equal(fts_convert_array(st, 1000, ns, err), 0);
	for (int i = 0; i < 1000; i++) {
		int64_t miss = ns[i] > truth[i] ? ns[i] - truth[i] : truth[i] - ns[i];
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
	/* a stamp past the newest sample converts with one clock read after it, and no
	 * sample; without a sampler thread (as here), a history older than the sampler's
	 * period makes the conversion take one */
	uint64_t before = fts__clock_samples_taken();
	int64_t t, v, e;
	simc_advance(10e6L);
	fast_timestamp_t fresh = simc_stamp(&t);
	simc_advance(10e6L);
	assert_int_equal(fts_convert(&fresh, &v, &e), 0);
	assert_true(fts__clock_samples_taken() == before);
	assert_true((v > t ? v - t : t - v) <= e);
	simc_advance(200e6L);
	fresh = simc_stamp(&t);
	assert_int_equal(fts_convert(&fresh, &v, &e), 0);
	assert_true(fts__clock_samples_taken() > before);
	assert_true((v > t ? v - t : t - v) <= e);
	fts__clock_set_source(NULL);
}

static void reference_clock_failure(void **state)
{
	fast_timestamp_t s;
	int64_t ns = 1, err = 2, truth;
	(void)state;

	simc_use(2, 0);
	s = simc_stamp(&truth);
	simc.fail = 1;
	errno = 0;
	assert_int_equal(fts_convert(&s, &ns, &err), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(ns, 1);
	/* once the clock works again, so do conversions */
	simc.fail = 0;
	assert_int_equal(fts_convert(&s, &ns, &err), 0);
	assert_true((ns > truth ? ns - truth : truth - ns) <= err);
	/* a failing clock later only stops refreshing: old history still converts */
	simc.fail = 1;
	simc_advance(50e6L);
	s = simc_stamp(&truth);
	simc_advance(50e6L);
	assert_int_equal(fts_convert(&s, &ns, &err), 0);
	assert_true((ns > truth ? ns - truth : truth - ns) <= err);
	fts__clock_set_source(NULL);
}

static int64_t raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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
	/* Real stamps 20 ms apart, against CLOCK_MONOTONIC_RAW (which no slew moves, as
	 * none moves the difference): inside the outer bracket, around the inner one,
	 * give or take the measured frequency's error (100 ppm allowed) and 1 us. */
	{
		int64_t r1, r2, slack;
		t0 = raw_ns();
		store_fast_timestamp(&c);
		r1 = raw_ns();
		nanosleep(&pause, NULL);
		r2 = raw_ns();
		store_fast_timestamp(&d);
		t1 = raw_ns();
		assert_int_equal(fts_diff_ns(&c, &d, &ns), 0);
		slack = 1000 + (t1 - t0) / 10000;
		print_message("diff %lld ns, RAW brackets [%lld, %lld] ns\n", (long long)ns,
			      (long long)(r2 - r1), (long long)(t1 - t0));
		assert_true(ns >= r2 - r1 - slack && ns <= t1 - t0 + slack);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(null_arguments),
		cmocka_unit_test(tagged_stamps_are_exact),
		cmocka_unit_test(store_keeps_errno),
		cmocka_unit_test(process_clock_on_sim),
		cmocka_unit_test(reference_clock_failure),
		cmocka_unit_test(diff_of_stamps),
	};
	return fts_test_run(tests, argc, argv);
}
