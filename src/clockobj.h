/* clockobj.h - clockobj.c's interface: the process clock's one object, whole (struct
 * fts__clock, whose hot part is clock.h's), the constants of its sampling and the
 * accessors of its hot part, each carrying its field's rule. For the process clock's
 * own files alone (clock.c, sampler.c, proof.c, reset.c), which share it under its
 * lock; the rest of the library sees clock.h. Not installed. */
#ifndef FTS__CLOCKOBJ_H
#define FTS__CLOCKOBJ_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "attach.h"
#include "calib.h"
#include "clock.h"
#include "health.h"
#include "hwsource.h"
#include "sysfs.h"
#include "warp.h"

#define FIRST_GAP_NS 2000000          /* between the first three samples, */
#define FIRST_GAP_PER_RES 20000       /* at least this many resolutions of the clock (a
				       * coarse clock's reads widen each bracket by one:
				       * at most 100 ppm more noise over two gaps) */
#define SAMPLER_PERIOD_NS 100000000   /* background sampler period */
#define SAMPLER_IDLE_ROUNDS 100       /* 10 s without conversions: the thread exits */
#define SAMPLE_TRIES 5                /* keep the narrowest of this many brackets */
#define RETRY_MIN_NS 1000000000       /* a failed thread start is retried after 1 s, */
#define RETRY_MAX_NS 64000000000      /* doubling up to 64 s */

/* What the process clock judged of its source. */
struct judged {
	struct fts__health health;    /* what the next sample is judged against */
	uint64_t steps, suspends;     /* wall-clock steps and suspends found */
	int64_t ambiguous_ns;         /* span of the interval holding the last event */
	char fault_reason[160];       /* why it is faulted */
};
/* The counter across CPUs, where the kernel does not keep time with it itself: the
 * warp test at the first calibration, then samples taken on each CPU in turn. */
enum proof_state {
	PROOF_UNSET,             /* not looked at yet */
	PROOF_NONE,              /* not needed: the kernel keeps time with the counter */
	PROOF_PENDING,           /* needed, not run yet: at the first calibration */
	PROOF_DONE,              /* proven: no warp wider than a sample's bracket */
	PROOF_WARPED,            /* a wider warp: new stamps use the clock */
	PROOF_NO_RUN,            /* the test could not run: retried */
};
struct proof {
	enum proof_state state;
	struct fts__warp w;
	cpu_set_t cpus;          /* the CPUs it was run on, which the sampler visits */
	int cpu;                 /* the CPU the sampler moved to last, -1: none */
	pthread_t mover;         /* the thread that moved there */
	uint64_t bracket;        /* ticks: a sample's bracket when it ran */
	int64_t round_moved;     /* ns: the offsets measured between the CPUs the sampler
				  * visited one after the other, summed over its round */
	int round_visits;        /* the visits summed */
	int64_t retry_at, retry_gap;   /* PROOF_NO_RUN: the next try, CLOCK_MONOTONIC ns */
	char text[200];
};
/* The cold part that a new source forgets: one assignment (fts__reset_locked). */
struct clock_cold {
	struct judged judged;
	struct proof proof;
	int64_t res_ns;                /* the clock's resolution (resolution.c), 0: fine or
					* not yet probed; hot.res_ticks the same in ticks */
	int res_probed;
	int64_t retry_at, retry_gap;   /* sampler thread start backoff, CLOCK_MONOTONIC ns;
					* also forgotten in a fork's child */
};
/* The process clock (clock.h). */
struct fts__clock {
	struct fts__clock_hot hot;     /* first: clock.h reaches it there */
	/* The histories hot.hists[] point to, once made: in the hot part's page (hot.ld),
	 * not on the heap, so an old stamp's look-up takes no page more than the one its
	 * segments lie in. */
	struct {
		_Alignas(64) struct fts_calib c;   /* what a reader reads in one line */
	} own[FTS__NCLK];
	pthread_mutex_t lock;          /* guards every write of the hot part, and all below */
	/* Kept by every reset: */
	void (*after_round)(void);     /* fts__clock_on_round(): set once, before a sampler */
	int64_t period_ns;             /* the sampling period (faststamp serve's interval) */
	uint64_t thread_starts;        /* attempts to start the sampler thread */
	unsigned source_gen;           /* a sampler thread of another source stops */
	int alive;                     /* sampler threads alive, of any source (a fork's
					* child has none) */
	/* Forgotten with the source: */
	struct clock_cold of;
	struct fts__attach attach;     /* attach.c's (fts__attach_reset) */
};
/* Constant: its uses compile to the object's address. */
static struct fts__clock *const pc = &fts__clock_pc;

/* ---- the hot part's accessors, each carrying its field's rule (clock.h) ----------- */

static inline int pc_faulted(void)
{
	return __atomic_load_n(&pc->hot.faulted, __ATOMIC_RELAXED);
}
static inline int pc_running(void)
{
	return __atomic_load_n(&pc->hot.running, __ATOMIC_RELAXED);
}
static inline uint64_t pc_taken(void)
{
	return __atomic_load_n(&pc->hot.taken, __ATOMIC_RELAXED);
}
static inline uint64_t pc_period_ticks(void)
{
	return __atomic_load_n(&pc->hot.period_ticks, __ATOMIC_RELAXED);
}
static inline int64_t pc_skew_ns(void)
{
	return __atomic_load_n(&pc->hot.skew_ns, __ATOMIC_RELAXED);
}
/* The source's counter now. */
static inline uint64_t src_counter(void)
{
	const struct fts__source *src = &pc->hot.src;

	return src->counter(src->ctx);
}
static inline struct fts_calib *pc_hist(int k)
{
	return __atomic_load_n(&pc->hot.hists[k], __ATOMIC_ACQUIRE);
}
/* CLOCK_REALTIME's, the one the process clock is judged by. */
static inline struct fts_calib *realtime_hist(void)
{
	return pc_hist(FTS__CLK_REALTIME);
}
/* Rule 1 on a coarse clock: what a read returns the clock held since its last tick, up
 * to a resolution before the read. The bracket begins that much earlier. */
static inline uint64_t res_widen(uint64_t b)
{
	uint64_t q = __atomic_load_n(&pc->hot.res_ticks, __ATOMIC_RELAXED);

	return b > q ? b - q : 0;
}
/* What conversions see changed: a line made from it before (fresh.h) is not used. */
static inline void view_changed(void)
{
	__atomic_fetch_add(&pc->hot.generation, 1, __ATOMIC_RELEASE);
}

/* Does the process clock read the machine's own counter (not a test's source)? */
static inline int pc_uses_hw(void)
{
	return pc->hot.src.counter == fts__hw_counter;
}

/* The kernel's clocksource now, through the source's seam (fts__clock_clocksource). */
static inline int pc_clocksource(char *out, size_t len)
{
	const struct fts__source *src = &pc->hot.src;

	return src->clocksource ? src->clocksource(src->ctx, out, len) : fts__sysfs_clocksource(out, len);
}

#endif /* FTS__CLOCKOBJ_H */
