/* cmocka.h - the part of cmocka's API the tests use, for builds without cmocka.
 *
 * Debian has no cmocka for cross targets, so cross builds (scripts/stages/60-cross.sh)
 * compile the same test sources against this header instead; native builds always use
 * the real cmocka (tests/CMakeLists.txt). Covered: the assert_* macros, fail(),
 * fail_msg(), skip(), print_message(), print_error(), unit tests with setup and
 * teardown, cmocka_run_group_tests(_name). Not covered: mocks (will_return, mock,
 * expect_*) and test_malloc; a test using them does not build here, loudly.
 * A failing assertion ends the test with longjmp, as cmocka does; from a thread other
 * than the one running the tests it ends the process (exit 1). */
#ifndef FTS_MINI_CMOCKA_H
#define FTS_MINI_CMOCKA_H

#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uintmax_t LargestIntegralType;
#define cast_to_largest_integral_type(v) ((LargestIntegralType)(v))
#define cast_ptr_to_largest_integral_type(v) ((LargestIntegralType)(uintptr_t)(v))

typedef void (*CMUnitTestFunction)(void **state);
typedef int (*CMFixtureFunction)(void **state);

struct CMUnitTest {
	const char *name;
	CMUnitTestFunction test_func;
	CMFixtureFunction setup_func;
	CMFixtureFunction teardown_func;
	void *initial_state;
};

enum { FTS_MINI_FAIL = 1, FTS_MINI_SKIP = 2 };

static jmp_buf fts_mini_jmp;
static volatile int fts_mini_active;
static volatile int fts_mini_how;
static pthread_t fts_mini_runner;

__attribute__((unused, format(printf, 1, 2))) static void print_message(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

__attribute__((unused, format(printf, 1, 2))) static void print_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

__attribute__((unused, noreturn)) static void fts_mini_end(int how)
{
	fflush(stdout);
	if (fts_mini_active && pthread_equal(pthread_self(), fts_mini_runner)) {
		fts_mini_how = how;
		longjmp(fts_mini_jmp, 1);
	}
	fprintf(stderr, "mini-cmocka: %s outside the test runner's thread: exiting\n",
		how == FTS_MINI_SKIP ? "skip" : "failure");
	exit(how == FTS_MINI_SKIP ? 77 : 1);
}

__attribute__((unused, noreturn, format(printf, 3, 4))) static void
fts_mini_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s:%d: error: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fts_mini_end(FTS_MINI_FAIL);
}

#define FTS_MINI_CHECK(cond, ...) \
	do { \
		if (!(cond)) \
			fts_mini_fail(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#define assert_true(c) FTS_MINI_CHECK((c), "%s is not true", #c)
#define assert_false(c) FTS_MINI_CHECK(!(c), "%s is not false", #c)
#define assert_null(p) FTS_MINI_CHECK((p) == NULL, "%s is not NULL", #p)
#define assert_non_null(p) FTS_MINI_CHECK((p) != NULL, "%s is NULL", #p)
#define assert_ptr_equal(a, b) \
	FTS_MINI_CHECK((const void *)(a) == (const void *)(b), "%p != %p", (const void *)(a), \
		       (const void *)(b))
#define assert_ptr_not_equal(a, b) \
	FTS_MINI_CHECK((const void *)(a) != (const void *)(b), "%p == %p", (const void *)(a), \
		       (const void *)(b))

/* As in cmocka, integers compare as the largest unsigned type; printed both ways. */
#define FTS_MINI_INT(a, op, b) \
	do { \
		LargestIntegralType fts_a_ = (LargestIntegralType)(a), \
				    fts_b_ = (LargestIntegralType)(b); \
		FTS_MINI_CHECK(fts_a_ op fts_b_, "%s (%jd, %#jx) %s %s (%jd, %#jx) failed", #a, \
			       (intmax_t)fts_a_, fts_a_, #op, #b, (intmax_t)fts_b_, fts_b_); \
	} while (0)
#define assert_int_equal(a, b) FTS_MINI_INT(a, ==, b)
#define assert_int_not_equal(a, b) FTS_MINI_INT(a, !=, b)
#define assert_in_range(v, lo, hi) \
	do { \
		LargestIntegralType fts_v_ = (LargestIntegralType)(v), \
				    fts_l_ = (LargestIntegralType)(lo), \
				    fts_h_ = (LargestIntegralType)(hi); \
		FTS_MINI_CHECK(fts_v_ >= fts_l_ && fts_v_ <= fts_h_, \
			       "%s = %ju is not within [%ju, %ju]", #v, fts_v_, fts_l_, fts_h_); \
	} while (0)
#define assert_not_in_range(v, lo, hi) \
	do { \
		LargestIntegralType fts_v_ = (LargestIntegralType)(v), \
				    fts_l_ = (LargestIntegralType)(lo), \
				    fts_h_ = (LargestIntegralType)(hi); \
		FTS_MINI_CHECK(fts_v_ < fts_l_ || fts_v_ > fts_h_, \
			       "%s = %ju is within [%ju, %ju]", #v, fts_v_, fts_l_, fts_h_); \
	} while (0)
#define assert_return_code(rc, err) \
	FTS_MINI_CHECK((intmax_t)(rc) >= 0, "%s = %jd < 0, errno %d (%s)", #rc, (intmax_t)(rc), \
		       (int)(err), strerror((int)(err)))
#define assert_string_equal(a, b) \
	FTS_MINI_CHECK(!strcmp((a), (b)), "\"%s\" != \"%s\"", (a), (b))
#define assert_string_not_equal(a, b) \
	FTS_MINI_CHECK(strcmp((a), (b)), "\"%s\" == \"%s\"", (a), (b))
#define assert_memory_equal(a, b, n) \
	FTS_MINI_CHECK(!memcmp((a), (b), (n)), "%zu bytes of %s and %s differ", (size_t)(n), \
		       #a, #b)
#define assert_memory_not_equal(a, b, n) \
	FTS_MINI_CHECK(memcmp((a), (b), (n)), "%zu bytes of %s and %s are equal", \
		       (size_t)(n), #a, #b)
#define fail() fts_mini_fail(__FILE__, __LINE__, "fail()")
#define fail_msg(...) fts_mini_fail(__FILE__, __LINE__, __VA_ARGS__)
#define skip() fts_mini_end(FTS_MINI_SKIP)

#define cmocka_unit_test(f) { #f, f, NULL, NULL, NULL }
#define cmocka_unit_test_setup(f, s) { #f, f, s, NULL, NULL }
#define cmocka_unit_test_teardown(f, t) { #f, f, NULL, t, NULL }
#define cmocka_unit_test_setup_teardown(f, s, t) { #f, f, s, t, NULL }
#define cmocka_unit_test_prestate(f, p) { #f, f, NULL, NULL, p }
#define cmocka_unit_test_prestate_setup_teardown(f, s, t, p) { #f, f, s, t, p }

/* Runs fn(state) under the jump buffer: 0 passed, FTS_MINI_FAIL or FTS_MINI_SKIP. */
__attribute__((unused)) static int fts_mini_call_test(CMUnitTestFunction fn, void **state)
{
	fts_mini_how = 0;
	fts_mini_active = 1;
	if (setjmp(fts_mini_jmp) == 0)
		fn(state);
	fts_mini_active = 0;
	return fts_mini_how;
}

__attribute__((unused)) static int fts_mini_call_fixture(CMFixtureFunction fn, void **state)
{
	fts_mini_how = 0;
	if (!fn)
		return 0;
	fts_mini_active = 1;
	if (setjmp(fts_mini_jmp) == 0 && fn(state) != 0)
		fts_mini_how = FTS_MINI_FAIL;
	fts_mini_active = 0;
	return fts_mini_how;
}

static const char *fts_mini_filter;   /* run only the test of this name; NULL: all */

__attribute__((unused)) static void cmocka_set_test_filter(const char *name)
{
	fts_mini_filter = name;
}

__attribute__((unused)) static int fts_mini_run(const char *group, const struct CMUnitTest *t,
						size_t n, CMFixtureFunction setup,
						CMFixtureFunction teardown)
{
	void *gstate = NULL;
	size_t failed = 0, skipped = 0;

	fts_mini_runner = pthread_self();
	printf("[==========] %s: running %zu test(s) (mini-cmocka).\n", group, n);
	if (fts_mini_call_fixture(setup, &gstate)) {
		printf("[  ERROR   ] %s: group setup failed\n", group);
		return (int)n;
	}
	for (size_t i = 0; i < n; i++) {
		void *state = t[i].initial_state;
		int how;
		if (fts_mini_filter && strcmp(fts_mini_filter, t[i].name))
			continue;
		printf("[ RUN      ] %s\n", t[i].name);
		fflush(stdout);
		if (!t[i].initial_state && gstate)
			state = gstate;
		/* As cmocka: the teardown runs when the setup succeeded. */
		how = fts_mini_call_fixture(t[i].setup_func, &state);
		if (how == 0) {
			how = fts_mini_call_test(t[i].test_func, &state);
			if (fts_mini_call_fixture(t[i].teardown_func, &state) == FTS_MINI_FAIL)
				how = FTS_MINI_FAIL;
		}
		if (how == FTS_MINI_FAIL) {
			failed++;
			printf("[  FAILED  ] %s\n", t[i].name);
		} else if (how == FTS_MINI_SKIP) {
			skipped++;
			printf("[  SKIPPED ] %s\n", t[i].name);
		} else {
			printf("[       OK ] %s\n", t[i].name);
		}
	}
	if (fts_mini_call_fixture(teardown, &gstate))
		printf("[  ERROR   ] %s: group teardown failed\n", group);
	printf("[==========] %s: %zu test(s) run.\n[  PASSED  ] %zu test(s).\n", group, n,
	       n - failed - skipped);
	if (skipped)
		printf("[  SKIPPED ] %zu test(s).\n", skipped);
	if (failed)
		printf("[  FAILED  ] %zu test(s).\n", failed);
	fflush(stdout);
	return (int)failed;
}

#define cmocka_run_group_tests(tests, setup, teardown) \
	fts_mini_run(#tests, (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown))
#define cmocka_run_group_tests_name(name, tests, setup, teardown) \
	fts_mini_run((name), (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown))

#endif /* FTS_MINI_CMOCKA_H */
