/* now.c - reading and sleeping on the system clocks. */
#include <errno.h>
#include <time.h>

#include "internal.h"
#include "now.h"

FTS__PATH(4) int fts__now(clockid_t id, int64_t *ns)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return -errno;
	*ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return 0;
}

struct timespec fts__timespec(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
}

/* An absolute deadline: a signal handler that interrupts the sleep costs its own time
 * only, where restarting a relative sleep adds the timer slack back every time (and a
 * steady stream of signals would keep it sleeping for ever). */
void fts__sleep_until(int64_t deadline)
{
	struct timespec ts = fts__timespec(deadline);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}
