/* test_calib.c - fts_calib's contract: bad input leaves the state intact, errors are
 * the documented ones, and the basic conversions are right. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testmain.h"

#include "faststamp.h"

/* Conversions of a few probes, to compare before and after a rejected call. */
static void snapshot(const struct fts_calib *c, int64_t out[8])
{
	static const uint64_t probes[4] = { 0, 1500, 2500, UINT64_MAX / 4 };
	for (int i = 0; i < 4; i++) {
		out[2 * i] = out[2 * i + 1] = -7;
		fts_calib_convert(c, probes[i], &out[2 * i], &out[2 * i + 1]);
	}
}

static void add_rejects_bad_samples(void **state)
{
	struct fts_calib *c = fts_calib_new();
	int64_t a[8], b[8];
	static const struct { uint64_t before; int64_t ref; uint64_t after; const char *why; } bad[] = {
		{ 5000, 1, 4000, "before > after" },
		{ 2900, 1, 4000, "starts before the previous one ended" },
		{ 0, 1, 0, "counter went back" },
		{ 3000, 1, 3000, "same midpoint as the previous zero-width sample" },
	};
	(void)state;

	assert_non_null(c);
	assert_int_equal(fts_calib_add(c, 1000, 1000000, 1000), 0);
	assert_int_equal(fts_calib_add(c, 2000, 2000000, 3000), 0);
	assert_int_equal(fts_calib_add(c, 3000, 3000000, 3000), 0);
	snapshot(c, a);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = fts_calib_count(c);
		errno = 0;
		print_message("rejects: %s\n", bad[i].why);
		assert_int_equal(fts_calib_add(c, bad[i].before, bad[i].ref, bad[i].after), -1);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(fts_calib_count(c), n);
		snapshot(c, b);
		assert_memory_equal(a, b, sizeof(a));
	}
	errno = 0;
	assert_int_equal(fts_calib_add(NULL, 1, 2, 3), -1);
	assert_int_equal(errno, EINVAL);
	/* a sample starting exactly where the previous ended is fine */
	assert_int_equal(fts_calib_add(c, 3000, 3500000, 4000), 0);
	fts_calib_free(c);
}

static void convert_errors(void **state)
{
	struct fts_calib *c = fts_calib_new();
	int64_t ns = 11, err = 12;
	uint64_t lo, hi;
	(void)state;

	errno = 0;
	assert_int_equal(fts_calib_convert(NULL, 1, &ns, &err), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fts_calib_convert(c, 1, NULL, &err), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fts_calib_convert(c, 1, &ns, &err), -1);
	assert_int_equal(errno, ENODATA);
	assert_int_equal(fts_calib_range(c, &lo, &hi), -1);
	assert_int_equal(errno, ENODATA);
	assert_int_equal(fts_calib_add(c, 100, 1000, 100), 0);
	errno = 0;
	assert_int_equal(fts_calib_convert(c, 1, &ns, &err), -1);
	assert_int_equal(errno, ENODATA);
	assert_int_equal(fts_calib_range(c, &lo, &hi), 0);
	assert_int_equal(lo, 100);
	assert_int_equal(hi, 100);
	assert_int_equal(ns, 11);
	assert_int_equal(err, 12);
	assert_int_equal(fts_calib_range(NULL, &lo, &hi), -1);
	assert_int_equal(fts_calib_count(NULL), 0);
	fts_calib_free(NULL);
	fts_calib_free(c);
}

static void opts_validated(void **state)
{
	struct fts_calib_opts o = { .size = sizeof(o), .max_samples = 15 };
	(void)state;
	errno = 0;
	assert_null(fts_calib_new_opts(&o));
	assert_int_equal(errno, EINVAL);
	o.max_samples = 16;
	o.size = 1;
	errno = 0;
	assert_null(fts_calib_new_opts(&o));
	assert_int_equal(errno, EINVAL);
	o.size = sizeof(o);
	struct fts_calib *c = fts_calib_new_opts(&o);
	assert_non_null(c);
	for (uint64_t i = 0; i < 100; i++)
		assert_int_equal(fts_calib_add(c, i * 1000, (int64_t)(i * 1000), i * 1000 + 10), 0);
	assert_true(fts_calib_count(c) <= 16);
	fts_calib_free(c);
}

/* Exact data on a line: interpolation is exact, bound small and honest. */
static void exact_line(void **state)
{
	struct fts_calib *c = fts_calib_new();
	int64_t ns, err;
	uint64_t lo, hi;
	(void)state;

	/* 1 GHz counter, reference = 5e9 + counter, exact brackets */
	assert_int_equal(fts_calib_add(c, 1000000, 5001000000, 1000000), 0);
	assert_int_equal(fts_calib_add(c, 2000000, 5002000000, 2000000), 0);
	assert_int_equal(fts_calib_add(c, 3000000, 5003000000, 3000000), 0);
	for (uint64_t x = 1000000; x <= 3000000; x += 12345) {
		assert_int_equal(fts_calib_convert(c, x, &ns, &err), 0);
		assert_true(ns >= 5000000000 + (int64_t)x - 1 && ns <= 5000000000 + (int64_t)x + 1);
		assert_true(err >= 1 && err < 100);
	}
	/* err_ns may be NULL */
	assert_int_equal(fts_calib_convert(c, 2500000, &ns, NULL), 0);
	assert_int_equal(ns, 5002500000);
	assert_int_equal(fts_calib_range(c, &lo, &hi), 0);
	assert_int_equal(lo, 1000000);
	assert_int_equal(hi, 3000000);
	/* further away from the samples the bound grows */
	int64_t e1, e2;
	assert_int_equal(fts_calib_convert(c, 4000000, &ns, &e1), 0);
	assert_int_equal(fts_calib_convert(c, 40000000, &ns, &e2), 0);
	assert_true(e2 > e1);
	fts_calib_free(c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_rejects_bad_samples),
		cmocka_unit_test(convert_errors),
		cmocka_unit_test(opts_validated),
		cmocka_unit_test(exact_line),
	};
	return fts_test_run(tests, argc, argv);
}
