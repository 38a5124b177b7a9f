/* testmain.h - what every cmocka test program shares: run all its tests, or with one
 * argument only the test of that name (CTest runs each test as its own case), and say
 * "skipped" in a way CTest sees: a test that calls FTS_SKIP prints its reason, and a
 * run where something skipped and nothing failed exits 77 (SKIP_RETURN_CODE). */
#ifndef FTS_TEST_MAIN_H
#define FTS_TEST_MAIN_H

#include <stdio.h>
#include <string.h>

static int fts_test_skipped;

/* 1 in a build under AddressSanitizer or ThreadSanitizer (gcc's macros, clang's
 * features): memory figures there include the sanitizer's own. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define FTS_TEST_SANITIZED 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#    define FTS_TEST_SANITIZED 1
#  else
#    define FTS_TEST_SANITIZED 0
#  endif
#else
#  define FTS_TEST_SANITIZED 0
#endif

#define FTS_SKIP(...)                                   \
	do {                                            \
		print_message("SKIP: " __VA_ARGS__);    \
		print_message("\n");                    \
		fts_test_skipped = 1;                   \
		skip();                                 \
	} while (0)

/* No argument, or the name of one of the tests: 1 (and the filter is set). */
static inline int fts_test_select(const struct CMUnitTest *t, size_t n, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(t[i].name, argv[1])) {
			cmocka_set_test_filter(argv[1]);
			return 1;
		}
	}
	fprintf(stderr, "%s: no test named '%s'\n", argv[0], argv[1]);
	return 0;
}

static inline int fts_test_exit(int failed)
{
	return failed ? 1 : fts_test_skipped ? 77 : 0;
}

#define fts_test_run(tests, argc, argv)                                                 \
	(fts_test_select((tests), sizeof(tests) / sizeof((tests)[0]), (argc), (argv))     \
		 ? fts_test_exit(cmocka_run_group_tests(tests, NULL, NULL))             \
		 : 2)

#endif
