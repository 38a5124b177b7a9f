/* convlines - one conversion, alone, between callgrind's instrumentation on and off, for
 * scripts/conversion-lines: run under `valgrind --tool=callgrind --instr-atstart=no
 * --cache-sim=yes`, the cache simulator starts empty at that one conversion, so its
 * misses are the distinct lines it touches (code and data).
 *
 *   convlines fresh   a stamp stored at once before its conversion (past the newest
 *                     sample: the fresh path)
 *   convlines old     a stamp stored after the history's first samples and before
 *                     its latest (inside it: no clock read)
 *   convlines recent  a history of its own (fts_calib_new), fed 2,000 samples 100 ms
 *                     apart whose rate moves 40 ppm every 8 (a segment each), and
 *                     one fts_calib_convert of a counter value 30 samples back (in its
 *                     newest final segments: the copy its published state carries)
 *   convlines deep    the same, 400 samples back (in its chunks: the index's walk)
 *   convlines first   no valgrind: the process's first conversion, timed (ns, on
 *                     CLOCK_MONOTONIC), between two getpid system calls that mark it
 *                     for strace, the page faults it took, and the history it used
 *                     (scripts/attach-breakdown)
 *   convlines path-fresh, path-old, path-late, path-kept
 *                     no valgrind: after 50 rounds of a fresh stamp converted and 3 ms of
 *                     sleep, one conversion of a fresh stamp (the fresh line renewed from
 *                     a clock read), of an old one (inside the history), of a fresh
 *                     one after 120 ms more (past the chain of renewals, where the
 *                     history's newest tail takes the line's place), or of a fresh one 3
 *                     ms after that one (from the tail it kept, or its line), between
 *                     calls of path_begin() and path_end(), where
 *                     scripts/conversion-path's debugger starts and stops stepping
 *
 * Both kinds are converted first, untimed, so that what one conversion reads the first
 * time only (a history made, a path looked up) is behind. Exit 0, 1 when the
 * conversion failed, 2 on a usage error, 77 without valgrind's header (fresh, old). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "faststamp.h"

#if defined(__has_include)
#  if __has_include(<valgrind/callgrind.h>)
#    include <valgrind/callgrind.h>
#    define HAVE_CALLGRIND 1
#  endif
#endif

#ifdef HAVE_CALLGRIND
/* The one conversion counted, from a frame aligned to a cache line: the stack lines it
 * writes are then the same whatever the environment and the program's path (they move
 * the stack's start), so that the count is one figure, not one of two or three. */
__attribute__((noinline)) static int counted(const fast_timestamp_t *s, int64_t *ns)
{
	_Alignas(64) volatile char line[64];
	int rc;

	line[0] = 0;
	CALLGRIND_START_INSTRUMENTATION;
	rc = fts_convert(s, ns, NULL);
	CALLGRIND_STOP_INSTRUMENTATION;
	return rc + line[0];
}

/* convlines recent and deep: the history, and the one fts_calib_convert counted. */
static int counted_history(int back)
{
	_Alignas(64) volatile char line[64];
	struct fts_calib *c = fts_calib_new();
	uint64_t x = 1000000000, key[2000];
	int64_t r = 1700000000000000000, ns, err;
	int rc;

	if (!c)
		return 1;
	for (int i = 0; i < 2000; i++) {
		x += 260000000;   /* 100 ms at 2.6 GHz, 20 ppm fast or slow */
		r += 100000000 + ((i / 8) % 2 ? 2000 : -2000);
		if (fts_calib_add(c, x - 100, r, x + 100) < 0)
			return 1;
		key[i] = x;
	}
	x = key[2000 - 1 - back] + 1234567;
	if (fts_calib_convert(c, x, &ns, &err) < 0)   /* what a first call alone reads */
		return 1;
	line[0] = 0;
	CALLGRIND_START_INSTRUMENTATION;
	rc = fts_calib_convert(c, x, &ns, &err);
	CALLGRIND_STOP_INSTRUMENTATION;
	fts_calib_free(c);
	return (rc < 0) + line[0];
}
#endif

/* The marks of the path traced (scripts/conversion-path): global, never inlined. */
__attribute__((noinline)) void path_begin(void);
__attribute__((noinline)) void path_end(void);
__attribute__((noinline)) void path_begin(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void path_end(void)
{
	__asm__ volatile("");
}

int main(int argc, char **argv)
{
	fast_timestamp_t old, s;
	int64_t ns;
	struct timespec pause = { 0, 300000000 };   /* samples after the old stamp */
	int fresh, rc;

	if (argc != 2 || (strcmp(argv[1], "fresh") && strcmp(argv[1], "old") &&
			  strcmp(argv[1], "first") && strcmp(argv[1], "path-fresh") &&
			  strcmp(argv[1], "path-old") && strcmp(argv[1], "path-late") &&
			  strcmp(argv[1], "path-kept") && strcmp(argv[1], "recent") &&
			  strcmp(argv[1], "deep"))) {
		fprintf(stderr, "usage: convlines fresh|old|recent|deep|first|path-fresh|path-old|"
				"path-late|path-kept\n");
		return 2;
	}
	if (!strncmp(argv[1], "path-", 5)) {
		struct timespec idle = { 0, 3000000 };
		for (int i = 0; i < 50; i++) {
			store_fast_timestamp(&s);
			if (fts_convert(&s, &ns, NULL) < 0)
				return 1;
			if (i == 0)   /* after the history's first samples, before its latest */
				store_fast_timestamp(&old);
			nanosleep(&idle, NULL);
		}
		if (!strcmp(argv[1], "path-late") || !strcmp(argv[1], "path-kept")) {
			struct timespec late = { 0, 120000000 };
			nanosleep(&late, NULL);
		}
		if (!strcmp(argv[1], "path-kept")) {   /* the late one, untraced, then 3 ms */
			store_fast_timestamp(&s);
			if (fts_convert(&s, &ns, NULL) < 0)
				return 1;
			nanosleep(&idle, NULL);
		}
		store_fast_timestamp(&s);
		if (!strcmp(argv[1], "path-old"))
			s = old;
		path_begin();
#ifdef HAVE_CALLGRIND
		rc = counted(&s, &ns);
#else
		rc = fts_convert(&s, &ns, NULL);
#endif
		path_end();
		printf("converted %s %d\n", argv[1], rc);
		return rc < 0;
	}
	if (!strcmp(argv[1], "first")) {
		struct timespec a, b;
		struct rusage ra, rb;
		store_fast_timestamp(&s);
		getrusage(RUSAGE_SELF, &ra);
		syscall(SYS_getpid);   /* marks for strace: the conversion lies between */
		clock_gettime(CLOCK_MONOTONIC, &a);
		rc = fts_convert(&s, &ns, NULL);
		clock_gettime(CLOCK_MONOTONIC, &b);
		syscall(SYS_getpid);
		getrusage(RUSAGE_SELF, &rb);
		printf("first %lld\nfaults %ld\n",
		       (long long)((b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec),
		       (rb.ru_minflt - ra.ru_minflt) + (rb.ru_majflt - ra.ru_majflt));
		struct fts_info in = { .size = sizeof(in) };
		if (fts_get_info(&in) == 0)
			printf("source %s\nnote %s\n", in.history_source, in.history_note);
		return rc < 0;
	}
#ifndef HAVE_CALLGRIND
	printf("SKIP: built without valgrind/callgrind.h\n");
	return 77;
#else
	if (!strcmp(argv[1], "recent") || !strcmp(argv[1], "deep")) {
		rc = counted_history(!strcmp(argv[1], "recent") ? 30 : 400);
		printf("converted %s %d\n", argv[1], rc);
		return rc;
	}
	fresh = !strcmp(argv[1], "fresh");
	store_fast_timestamp(&s);   /* the first conversion makes the history ... */
	if (fts_convert(&s, &ns, NULL) < 0)
		return 1;
	store_fast_timestamp(&old);   /* ... so the old stamp lies inside it, after the pause */
	nanosleep(&pause, NULL);
	store_fast_timestamp(&s);
	if (fts_convert(&old, &ns, NULL) < 0 || fts_convert(&s, &ns, NULL) < 0)
		return 1;
	if (fresh)
		store_fast_timestamp(&s);
	else
		s = old;
	rc = counted(&s, &ns);
	printf("converted %s %d\n", argv[1], rc);
	return rc < 0;
#endif
}
