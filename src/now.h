/* now.h - now.c: reading and sleeping on the system clocks. Not installed. */
#ifndef FTS__NOW_H
#define FTS__NOW_H

#include <stdint.h>
#include <time.h>

/* clock id's time in ns into *ns: 0, or a negative errno. */
int fts__now(clockid_t id, int64_t *ns);
/* Sleep until CLOCK_MONOTONIC reaches deadline ns, whatever signals arrive. */
void fts__sleep_until(int64_t deadline);
/* ns (>= 0) as a struct timespec. */
struct timespec fts__timespec(int64_t ns);

#endif /* FTS__NOW_H */
