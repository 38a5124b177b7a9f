/* now.h - now.c: reading and sleeping on the system clocks. Not installed. */
#ifndef FTS__NOW_H
#define FTS__NOW_H

#include <stdint.h>
#include <time.h>

/* clock id's time in ns into *ns: 0, or a negative errno. Through the vDSO's
 * clock_gettime where there is one (now.c). */
int fts__now(clockid_t id, int64_t *ns);
/* A clock_gettime that returns 0 or a negative errno (and sets no errno). */
typedef int (*fts__gettime_fn)(clockid_t id, struct timespec *ts);
/* The one fts__now uses: the vDSO's (*vdso 1; vdso may be NULL), or else
 * fts__libc_gettime (*vdso 0). */
fts__gettime_fn fts__gettime_find(int *vdso);
/* libc's clock_gettime, in that form. */
int fts__libc_gettime(clockid_t id, struct timespec *ts);
/* Sleep until CLOCK_MONOTONIC reaches deadline ns, whatever signals arrive. */
void fts__sleep_until(int64_t deadline);
/* ns (>= 0) as a struct timespec. */
struct timespec fts__timespec(int64_t ns);

#endif /* FTS__NOW_H */
