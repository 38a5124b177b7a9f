/* hwsource.h - hwsource.c's interface: what the process clock reads (struct
 * fts__source, its seam: tests put a simulated machine in the hardware's place), the
 * hardware's source, and the clocks' ids. Not installed. */
#ifndef FTS__HWSOURCE_H
#define FTS__HWSOURCE_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "clk.h"
#include "warp.h"

/* The index of clock id, or -1 for a clock stamps do not convert to. */
int fts__hw_clk_of(clockid_t id);
/* The clock id of index k. */
clockid_t fts__hw_clk_id(int k);
struct fts__source {
	/* Counter for sampling, ordered like store_fast_timestamp() reads it. */
	uint64_t (*counter)(void *ctx);
	/* CLOCK_REALTIME in ns; 0 or a negative errno. Read inside the counter bracket. */
	int (*realtime)(void *ctx, int64_t *ns);
	/* The health reads, right after; NULL: the real clocks. 0 or a negative errno. */
	int (*clocks)(void *ctx, struct fts__clocks *v);
	/* Clock k (enum fts__clk, not FTS__CLK_REALTIME) in ns, read inside a counter
	 * bracket of its own; NULL: the real clocks. 0 or a negative errno. */
	int (*read)(void *ctx, int k, int64_t *ns);
	/* Wait about ns (the sampler's period). NULL: until the period's deadline on
	 * CLOCK_MONOTONIC, or until a timerfd with TFD_TIMER_CANCEL_ON_SET fires. */
	void (*wait)(void *ctx, int64_t ns);
	/* Sleep for about ns (first calibration); NULL: the real clock. */
	void (*sleep)(void *ctx, int64_t ns);
	/* The kernel's current clocksource; NULL: read sysfs. 0 or negative errno. */
	int (*clocksource)(void *ctx, char *out, size_t len);
	/* The counter across CPUs, for a source whose relation is not FTS__CS_IS_COUNTER:
	 * the CPUs it may be read on (NULL: this process's, fts__warp_cpus_allowed); the warp
	 * test over them (NULL: fts__warp_measure with real threads); move the sampler to
	 * one of them (NULL: pin the calling thread). 0 or a negative errno. */
	int (*cpus)(void *ctx, cpu_set_t *set);
	int (*warp)(void *ctx, const cpu_set_t *cpus, struct fts__warp *w);
	int (*migrate)(void *ctx, int cpu);
	/* The kernel's timekeeping epoch: a value that changes at every update of how it
	 * computes CLOCK_REALTIME from its clocksource (each tick, step, new rate), and only
	 * then; the hardware's: CLOCK_REALTIME_COARSE, the clock at its last update. Two
	 * equal reads say the clock ran on one line between them (rule 12; compared, never
	 * used as a time). NULL: not known, and rule 12 is not used. 0 or a negative
	 * errno. */
	int (*epoch)(void *ctx, int64_t *e);
	/* How the kernel's clocksource stands to this counter; the hardware's: the
	 * backend choice's. */
	enum fts__relation relation;
	void *ctx;
	int no_thread;    /* 1: never start the background sampler */
};
/* The hardware's source (hwsource.c): the counter, the real clocks, CLOCK_REALTIME_COARSE
 * as the epoch; the CPUs, the warp test and moves between CPUs as their defaults (the
 * NULL fields of a source). */
extern const struct fts__source fts__hw_source;
uint64_t fts__hw_counter(void *ctx);
int fts__hw_realtime(void *ctx, int64_t *ns);
int fts__hw_epoch(void *ctx, int64_t *e);
int fts__hw_clocks(void *ctx, struct fts__clocks *v);
int fts__hw_clock(void *ctx, int k, int64_t *ns);
int fts__hw_cpus(void *ctx, cpu_set_t *set);
int fts__hw_warp(void *ctx, const cpu_set_t *cpus, struct fts__warp *w);
int fts__hw_migrate(void *ctx, int cpu);

#endif /* FTS__HWSOURCE_H */
