/* simclock.h - a whole simulated machine for the process clock: a true tick t that
 * advances with every read, the counter as a function of t (healthy, or jumping,
 * reset, changing rate), and CLOCK_REALTIME, CLOCK_MONOTONIC and CLOCK_BOOTTIME as
 * functions of t (slews, steps, suspends). Plugged in through fts__clock_set_source. */
#ifndef FTS_TEST_SIMCLOCK_H
#define FTS_TEST_SIMCLOCK_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <string.h>

#include "internal.h"
#include "sim.h"
#include "clock.h"
#include "warp.h"

struct simclock {
	struct sim rt;        /* realtime against true ticks: rates, steps, suspends */
	struct sim mono;      /* monotonic: the same rates, no steps, no suspends */
	struct sim raw;       /* monotonic raw: the counter's nominal rate, no suspends */
	int64_t boot_extra;   /* boottime - monotonic: time spent suspended */
	int64_t tai_off;      /* tai - realtime: moved by a leap second alone */
	int64_t epoch;        /* the kernel's timekeeping epoch: changes of the realtime
			       * line (steps, slews, suspends) counted */
	int no_epoch;         /* the epoch seam says it is not known */
	uint64_t realtime_reads;   /* reads of the realtime clock, by anyone */
	uint64_t t;           /* true ticks */
	uint64_t per_read;    /* ticks a read takes, */
	uint64_t jitter;      /* plus up to this many more (slow, uneven reads: emulators) */
	uint64_t slow_ticks;  /* the slow_in-th read from now (1: the next) alone takes this */
	int slow_in;          /* many more, once */
	uint64_t quantum;     /* the clocks move only every this many true ticks (a coarse
			       * clocksource: acpi_pm's 279 ns), 0: every tick */
	uint64_t rng;
	/* counter = t before fault_at; after it, cstart + (t - fault_at) * num / den */
	uint64_t fault_at, cstart, num, den;
	int fail;             /* realtime reads fail */
	/* CPUs (simc_use_cpus): each CPU's counter is off the true one by cpu_off ticks;
	 * the sampler reads on cpu (it moves there through the migrate seam), and a hand
	 * over between two CPUs takes hop ticks. */
	int ncpu, cpu;
	int64_t cpu_off[8];
	int warp_fails;       /* the warp test fails (-EAGAIN) this many more times */
	uint64_t hop;
	char clocksource[32]; /* what the kernel's clocksource file says */
	/* With the library's own sampler thread (simc_use_thread): it and the test take
	 * turns, so the simulated machine is never touched by both at once. */
	pthread_mutex_t m;
	pthread_cond_t cv;
	int threaded, waiting, go;
};

static struct simclock simc __attribute__((unused));

/* One clock or counter read's worth of true time passes. */
static inline void simc_tick(void)
{
	simc.t += simc.per_read;
	if (simc.slow_in && --simc.slow_in == 0)
		simc.t += simc.slow_ticks;
	if (simc.jitter) {
		simc.rng = simc.rng * 6364136223846793005ull + 1442695040888963407ull;
		simc.t += (simc.rng >> 33) % (simc.jitter + 1);
	}
}

static inline uint64_t simc_counter_at(uint64_t t)
{
	if (!simc.fault_at || t < simc.fault_at)
		return t;
	return simc.cstart + (t - simc.fault_at) * simc.num / simc.den;
}

static inline uint64_t simc_counter(void *ctx)
{
	(void)ctx;
	simc_tick();
	return simc_counter_at(simc.t) + (uint64_t)simc.cpu_off[simc.cpu];
}

static inline int simc_cpus(void *ctx, cpu_set_t *set)
{
	(void)ctx;
	CPU_ZERO(set);
	for (int c = 0; c < simc.ncpu; c++)
		CPU_SET(c, set);
	return 0;
}

/* Called inside a move when set: a test's look at what a move may hold. */
static void (*simc_on_migrate)(void) __attribute__((unused));

static inline int simc_migrate(void *ctx, int cpu)
{
	(void)ctx;
	if (cpu < 0 || cpu >= simc.ncpu)
		return -EINVAL;
	if (simc_on_migrate)
		simc_on_migrate();
	simc.cpu = cpu;
	simc.t += 26000;   /* 10 us */
	return 0;
}

/* The warp test on the simulated CPUs: each hand-over from the first CPU to CPU j
 * arrives hop ticks later, so the least differences are hop +- their offset. */
static inline int simc_warp(void *ctx, const cpu_set_t *cpus, struct fts__warp *w)
{
	int first = -1;
	(void)ctx;
	*w = (struct fts__warp){ .worst_cpu = -1 };
	if (simc.warp_fails > 0) {
		simc.warp_fails--;
		return -EAGAIN;   /* the vCPUs never ran together */
	}
	for (int c = 0; c < simc.ncpu; c++) {
		if (!CPU_ISSET(c, cpus))
			continue;
		w->cpus++;
		if (first < 0) {
			first = c;
			continue;
		}
		int64_t d = simc.cpu_off[c] - simc.cpu_off[first];
		int64_t least[2] = { (int64_t)simc.hop - d, (int64_t)simc.hop + d };
		w->pairs++;
		w->rtt = 2 * simc.hop > w->rtt ? 2 * simc.hop : w->rtt;
		for (int i = 0; i < 2; i++) {
			uint64_t back = least[i] < 0 ? (uint64_t)-least[i] : 0;
			uint64_t far = least[i] < 0 ? back : (uint64_t)least[i];
			if (back > w->warp) {
				w->warp = back;
				w->worst_cpu = c;
			}
			w->spread = far > w->spread ? far : w->spread;
		}
	}
	simc.t += 520000;   /* 200 us */
	return 0;
}

/* What clock k (enum fts__clk) reads at true tick t: what it was at the clocksource's
 * last tick. */
static inline int64_t simc_truth_of(int k, uint64_t t)
{
	if (simc.quantum)
		t -= t % simc.quantum;
	switch (k) {
	case FTS__CLK_TAI: return sim_truth(&simc.rt, t) + simc.tai_off;
	case FTS__CLK_MONOTONIC: return sim_truth(&simc.mono, t);
	case FTS__CLK_BOOTTIME: return sim_truth(&simc.mono, t) + simc.boot_extra;
	case FTS__CLK_RAW: return sim_truth(&simc.raw, t);
	default: return sim_truth(&simc.rt, t);
	}
}

static inline int simc_realtime(void *ctx, int64_t *ns)
{
	(void)ctx;
	if (simc.fail)
		return -EIO;
	simc_tick();
	simc.realtime_reads++;
	*ns = simc_truth_of(FTS__CLK_REALTIME, simc.t);
	return 0;
}

static inline int simc_read(void *ctx, int k, int64_t *ns)
{
	(void)ctx;
	if (simc.fail)
		return -EIO;
	simc_tick();
	*ns = simc_truth_of(k, simc.t);
	return 0;
}

static inline int simc_clocks(void *ctx, struct fts__clocks *v)
{
	if (simc_realtime(ctx, &v->rt) < 0)
		return -EIO;
	simc_tick();
	v->mono = simc_truth_of(FTS__CLK_MONOTONIC, simc.t);
	v->boot = v->mono + simc.boot_extra;
	simc_tick();
	v->raw = simc_truth_of(FTS__CLK_RAW, simc.t);
	simc_tick();
	v->tai = simc_truth_of(FTS__CLK_TAI, simc.t);
	return 0;
}

static inline int simc_epoch(void *ctx, int64_t *e)
{
	(void)ctx;
	if (simc.no_epoch)
		return -ENOSYS;
	*e = simc.epoch;
	return 0;
}

static inline int simc_clocksource(void *ctx, char *out, size_t len)
{
	(void)ctx;
	snprintf(out, len, "%s", simc.clocksource);
	return 0;
}

static inline void simc_sleep(void *ctx, int64_t ns)
{
	(void)ctx;
	simc.t += (uint64_t)((long double)ns / simc.rt.rate[simc.rt.n - 1]);
}

static inline void simc_wait(void *ctx, int64_t ns)
{
	if (!simc.threaded) {
		simc_sleep(ctx, ns);
		return;
	}
	/* The sampler thread waits here for the test's simc_round(). */
	pthread_mutex_lock(&simc.m);
	simc.waiting = 1;
	pthread_cond_broadcast(&simc.cv);
	while (!simc.go && simc.threaded)
		pthread_cond_wait(&simc.cv, &simc.m);
	simc.go = 0;
	simc.waiting = 0;
	pthread_mutex_unlock(&simc.m);
}

static inline void simc_use_source(uint64_t seed, long double ppm, int no_thread);

/* A 2.6 GHz counter, realtime in 2026, drifting by ppm. */
static inline void simc_use(uint64_t seed, long double ppm)
{
	simc_use_source(seed, ppm, 1);
}

/* The same, sampled by the library's own sampler thread, a round at a time: each
 * simc_round() advances the machine by the sampler's period and lets it run once. */
static inline void simc_use_thread(uint64_t seed, long double ppm)
{
	simc_use_source(seed, ppm, 0);
}

/* Wait (up to 10 s) until the sampler thread waits in simc_wait, or has exited
 * (running 0): 1 when it waits. */
static inline int simc_sampler_waits(void)
{
	struct timespec until;
	int waits;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&simc.m);
	for (;;) {
		struct fts__clock_state cs;
		if (simc.waiting)
			break;
		pthread_mutex_unlock(&simc.m);
		fts__clock_state(&cs);
		pthread_mutex_lock(&simc.m);
		if (!cs.running && !simc.waiting)
			break;
		struct timespec slice;
		clock_gettime(CLOCK_REALTIME, &slice);
		if (slice.tv_sec > until.tv_sec)
			break;
		slice.tv_nsec += 1000000;
		if (slice.tv_nsec >= 1000000000) {
			slice.tv_sec++;
			slice.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&simc.cv, &simc.m, &slice);
	}
	waits = simc.waiting;
	pthread_mutex_unlock(&simc.m);
	return waits;
}

/* One round of the sampler thread: 100 ms pass, it wakes, does its round, waits
 * again. 1 if it did, 0 if no sampler thread waits. */
static inline int simc_round(void)
{
	if (!simc_sampler_waits())
		return 0;
	simc_sleep(NULL, 100000000);
	pthread_mutex_lock(&simc.m);
	simc.go = 1;
	pthread_cond_broadcast(&simc.cv);
	pthread_mutex_unlock(&simc.m);
	/* wait until it took the turn, then until it is back (or gone) */
	for (int i = 0; i < 10000000; i++) {
		pthread_mutex_lock(&simc.m);
		int taken = !simc.go;
		pthread_mutex_unlock(&simc.m);
		if (taken)
			break;
		sched_yield();
	}
	simc_sampler_waits();
	return 1;
}

/* Back to the real clock, with no sampler thread of the simulated machine left: it is
 * let go from simc_wait, finds its source replaced and exits. 0, or -1 after 10 s. */
static inline int simc_stop_thread(void)
{
	struct fts__clock_state cs;

	if (simc.threaded) {
		pthread_mutex_lock(&simc.m);
		simc.threaded = 0;
		pthread_cond_broadcast(&simc.cv);
		pthread_mutex_unlock(&simc.m);
	}
	fts__clock_set_source(NULL);
	for (int i = 0; i < 10000; i++) {
		fts__clock_state(&cs);
		if (!cs.threads)
			return 0;
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	return -1;
}

static inline void simc_use_source(uint64_t seed, long double ppm, int no_thread)
{
	struct fts__source s = { .counter = simc_counter, .realtime = simc_realtime,
				 .clocks = simc_clocks, .read = simc_read, .wait = simc_wait, .sleep = simc_sleep, .epoch = simc_epoch,
				 .clocksource = simc_clocksource, .ctx = &simc, .no_thread = no_thread };
	struct fts_info in = { .size = sizeof(in) };
	long double rate = 1 / 2.6L * (1 + ppm * 1e-6L);
	simc_stop_thread();
	sim_free(&simc.rt);   /* the last machine's clocks */
	sim_free(&simc.mono);
	sim_free(&simc.raw);
	memset(&simc, 0, sizeof(simc));
	pthread_mutex_init(&simc.m, NULL);
	pthread_cond_init(&simc.cv, NULL);
	simc.threaded = !no_thread;
	simc.t = 1000000000;
	simc.per_read = 30;
	sim_init(&simc.rt, 0, 1798761600e9L, rate, seed);
	sim_init(&simc.mono, 0, 5e12L, rate, seed + 1);
	sim_init(&simc.raw, 0, 5e12L, 1 / 2.6L, seed + 2);
	simc.tai_off = 37000000000;
	fts_get_info(&in);   /* the kernel's, until a test changes it */
	snprintf(simc.clocksource, sizeof(simc.clocksource), "%s", in.clocksource);
	fts__clock_set_source(&s);
}

/* Advance true time by ns. */
static inline void simc_advance(long double ns)
{
	simc.t += (uint64_t)(ns / simc.rt.rate[simc.rt.n - 1]);
}

/* The wall clock is set by step ns now. */
static inline void simc_step(long double step)
{
	sim_change(&simc.rt, simc.t, simc.rt.rate[simc.rt.n - 1], step);
	simc.epoch++;
}

/* A leap second (inserted: dir 1; deleted: -1): realtime steps back by dir s, TAI and
 * the monotonic clocks run on. */
static inline void simc_leap(int dir)
{
	simc_step(-1e9L * dir);
	simc.tai_off += 1000000000LL * dir;
}

/* A slew: both realtime and monotonic change rate by ppm against the nominal. */
static inline void simc_slew(long double ppm)
{
	long double rate = 1 / 2.6L * (1 + ppm * 1e-6L);
	sim_change(&simc.rt, simc.t, rate, 0);
	sim_change(&simc.mono, simc.t, rate, 0);
	simc.epoch++;
}

/* A new rate (ppm against the nominal) the kernel reckoned lag ns ago and publishes now
 * (P3): realtime and monotonic read on at the old rate until now, then jump onto the new
 * line, which traced back meets the old one lag ns ago. */
static inline void simc_slew_late(long double ppm, long double lag)
{
	long double old = simc.rt.rate[simc.rt.n - 1], rate = 1 / 2.6L * (1 + ppm * 1e-6L);
	long double jump = (rate - old) * (lag / old);
	sim_change(&simc.rt, simc.t, rate, jump);
	sim_change(&simc.mono, simc.t, rate, jump);
	simc.epoch++;
}

/* Suspend for ns: the counter and monotonic stop, realtime and boottime go on. */
static inline void simc_suspend(long double ns)
{
	simc_step(ns);
	simc.boot_extra += (int64_t)ns;
}

/* Suspend for ns while the counter keeps running: monotonic stops, the rest go on. */
static inline void simc_suspend_counting(long double ns)
{
	long double ticks = ns / simc.rt.rate[simc.rt.n - 1];
	simc_advance(ns);
	sim_change(&simc.mono, simc.t, simc.mono.rate[simc.mono.n - 1], -ns);
	simc.epoch++;
	sim_change(&simc.raw, simc.t, simc.raw.rate[simc.raw.n - 1],
		   -ticks * simc.raw.rate[simc.raw.n - 1]);
	simc.boot_extra += (int64_t)ns;
}

/* From now on the counter runs at num/den of its rate, starting from value start. */
static inline void simc_counter_fault(uint64_t start, uint64_t num, uint64_t den)
{
	simc.fault_at = simc.t;
	simc.cstart = start;
	simc.num = num;
	simc.den = den;
}

/* A machine of ncpu CPUs whose kernel keeps time with a clock computed from the
 * counter (kvm-clock): the counter is proven across them, and the sampler moves
 * between them. No sampler thread: fts__clock_round() is its round. */
static inline void simc_use_cpus(uint64_t seed, int ncpu)
{
	struct fts__source s = { .counter = simc_counter, .realtime = simc_realtime,
				 .clocks = simc_clocks, .read = simc_read, .sleep = simc_sleep, .epoch = simc_epoch,
				 .clocksource = simc_clocksource, .cpus = simc_cpus,
				 .warp = simc_warp, .migrate = simc_migrate,
				 .relation = FTS__CS_FROM_COUNTER, .ctx = &simc, .no_thread = 1 };
	simc_use(seed, 0);
	simc.ncpu = ncpu;
	simc.hop = 260;   /* 100 ns */
	fts__clock_set_source(&s);
}

/* What a stamp taken now on cpu holds. */
static inline fast_timestamp_t simc_stamp_on(int cpu)
{
	return simc_counter_at(simc.t) + (uint64_t)simc.cpu_off[cpu];
}

/* What a stamp taken now holds, and what the wall clock reads now. */
static inline fast_timestamp_t simc_stamp(int64_t *truth)
{
	*truth = simc_truth_of(FTS__CLK_REALTIME, simc.t);
	return simc_counter_at(simc.t);
}

#endif
