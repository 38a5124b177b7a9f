/* invariant.h - FTS__ASSERT. Not installed. */
#ifndef FTS__INVARIANT_H
#define FTS__INVARIANT_H

/* Invariants of the history, checked in debug and fuzzing builds only: a failure there
 * is a bug in faststamp, so it stops the program where the bug is. Release builds
 * compile them out (NDEBUG): the library never aborts its host. */
#if defined(NDEBUG) && !defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
#  define FTS__CHECKING 0     /* helpers used only in checks go under #if FTS__CHECKING */
#  define FTS__ASSERT(x) ((void)0)
#else
#  define FTS__CHECKING 1
#  include <stdio.h>
#  include <stdlib.h>
#  define FTS__ASSERT(x) ((x) ? (void)0 : fts__assert_failed(#x, __FILE__, __LINE__))
static inline void fts__assert_failed(const char *what, const char *file, int line)
{
	fprintf(stderr, "faststamp: invariant %s failed at %s:%d\n", what, file, line);
	abort();
}
#endif

#endif
