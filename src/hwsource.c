/* hwsource.c - the machine's own clocks and counter as a struct fts__source (hwsource.h):
 * the process clock's source unless a test puts a simulated machine in its place, and
 * the clocks' ids (enum fts__clk). Reads only. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "arch.h"
#include "clock.h"
#include "internal.h"
#include "now.h"
#include "warp.h"

FTS__HOT uint64_t fts__hw_counter(void *ctx)
{
	(void)ctx;
	return fts__arch_counter() & ~FTS_STAMP_CLOCK_TAG;
}

int fts__hw_realtime(void *ctx, int64_t *ns)
{
	(void)ctx;
	return fts__now(CLOCK_REALTIME, ns);
}

int fts__hw_clocks(void *ctx, struct fts__clocks *v)
{
	int rc;
	(void)ctx;
	if ((rc = fts__now(CLOCK_REALTIME, &v->rt)) < 0 ||
	    (rc = fts__now(CLOCK_MONOTONIC, &v->mono)) < 0 ||
	    (rc = fts__now(CLOCK_BOOTTIME, &v->boot)) < 0 ||
	    (rc = fts__now(CLOCK_MONOTONIC_RAW, &v->raw)) < 0)
		return rc;
	return fts__now(CLOCK_TAI, &v->tai);
}

int fts__hw_clock(void *ctx, int k, int64_t *ns)
{
	(void)ctx;
	return fts__now(fts__hw_clk_id(k), ns);
}

/* Each clock's id by enum fts__clk, a nibble each in one constant, not a table: a table
 * is one more page for a conversion after idle to bring back. */
#define CLK_ID(k, id) ((uint64_t)(id) << (4 * (k)))
#define CLK_IDS                                                                            \
	(CLK_ID(FTS__CLK_REALTIME, CLOCK_REALTIME) | CLK_ID(FTS__CLK_TAI, CLOCK_TAI) |     \
	 CLK_ID(FTS__CLK_MONOTONIC, CLOCK_MONOTONIC) |                                     \
	 CLK_ID(FTS__CLK_BOOTTIME, CLOCK_BOOTTIME) | CLK_ID(FTS__CLK_RAW, CLOCK_MONOTONIC_RAW))
_Static_assert(CLOCK_REALTIME < 16 && CLOCK_TAI < 16 && CLOCK_MONOTONIC < 16 &&
	       CLOCK_BOOTTIME < 16 && CLOCK_MONOTONIC_RAW < 16 && FTS__NCLK <= 16,
	       "every clock's id fits a nibble");

FTS__PATH(6) int fts__hw_clk_of(clockid_t id)
{
	for (int k = 0; k < FTS__NCLK; k++)
		if ((clockid_t)(CLK_IDS >> (4 * k) & 15) == id)
			return k;
	return -1;
}

FTS__PATH(4) clockid_t fts__hw_clk_id(int k)
{
	return (clockid_t)(CLK_IDS >> (4 * k) & 15);
}

/* CLOCK_REALTIME_COARSE is the clock at the kernel's last timekeeping update: every
 * update moves it, as time passes between them. */
FTS__PATH(1) int fts__hw_epoch(void *ctx, int64_t *e)
{
	(void)ctx;
	return fts__now(CLOCK_REALTIME_COARSE, e);
}

const struct fts__source fts__hw_source = { .counter = fts__hw_counter, .realtime = fts__hw_realtime,
					     .clocks = fts__hw_clocks, .read = fts__hw_clock, .epoch = fts__hw_epoch };

int fts__hw_cpus(void *ctx, cpu_set_t *set)
{
	(void)ctx;
	fts__warp_cpus_allowed(set);
	return 0;
}

static uint64_t hw_read(void *ctx)
{
	(void)ctx;
	return fts__arch_counter();
}

int fts__hw_warp(void *ctx, const cpu_set_t *cpus, struct fts__warp *w)
{
	(void)ctx;
	return fts__warp_measure(hw_read, NULL, cpus, w);
}

int fts__hw_migrate(void *ctx, int cpu)
{
	cpu_set_t one;

	(void)ctx;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return -pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
}
