/* clock.c - feeding the process history: samples, health checks, the sampler thread.
 *
 * The process clock is a few files around this one, each with one concern and its own
 * header, and dependencies run one way (scripts/depgraph): clock.c takes the samples (a
 * bracket of each clock), keeps a history of each clock, runs the sampler thread and
 * owns the lock and the view conversions use; below it, hwsource.c is the machine's
 * source (the counter and the clocks), health.c judges a sample against the ones
 * before, a pure function, record.c writes the record file of fts_clock_record, and
 * attach.c looks for the machine's shared history, converts with it while it is valid,
 * leaves it, and publishes it for faststamp serve, given what it needs as arguments.
 * Above it, fresh.c (rule 12) keeps a line from a clock read, renewed after each
 * sampler round through the hook it gives (fts__clock_on_round); convert.c (rule 11)
 * and tagged.c (rule 14) convert with what they keep.
 *
 * A sample is one CLOCK_REALTIME read bracketed by two counter reads (the narrowest of
 * a few tries): that is what the history gets. Then come the health reads, one
 * bracket around CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME and
 * CLOCK_MONOTONIC_RAW; the bracket's width bounds how far apart in time they were
 * read. Comparing them with the previous sample's tells what happened in between:
 *  - the counter against CLOCK_MONOTONIC_RAW, which no NTP adjustment, step or slew
 *    touches (on the counter's own clocksource it is the counter times a constant):
 *    a jump, a reset or a rate change of the counter is a counter fault. Across a
 *    suspend RAW stops; the counter may stop with it, or run on for as long as the
 *    suspend lasted (the kernel measures that with the RTC, to about a second);
 *  - a step of the wall clock (settimeofday, a leap second): realtime - boottime
 *    changes. Slews (NTP, ADJ_TICK up to +-10 %) change no offset: they are the
 *    history's business, which follows the clock's rate against the counter;
 *  - a suspend: boottime - monotonic grows.
 * The judgement itself is health.c's, a pure function of the samples.
 * Nothing here moves a sample: the history always gets what the clock read. A step, a
 * suspend or a fault lies somewhere between two samples, and the history's bound for
 * that interval covers both sides of it (see calib.c); that interval is the span of
 * ambiguity, reported in fts_info.step_window_ns. Sampling promptly after an event
 * keeps it short: the sampler thread waits on a timerfd armed with
 * TFD_TIMER_CANCEL_ON_SET, which the kernel fires when the wall clock is set and on
 * resume.
 *
 * A counter fault switches new stamps to clock_gettime (tagged, exact). The sample
 * that found it still joins the history (unless the counter went backwards, when its
 * values would collide with older ones), so stamps taken before it keep a bound; then
 * the history stops growing. So does the kernel leaving the counter's clocksource
 * (its watchdog found the counter unstable), checked every sampler round.
 *
 * Without a sampler thread (none could be started, or it exited after 10 s idle),
 * conversions do its work: at most one sample a period, and a thread start retried
 * with a backoff.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "estimate.h"
#include "health.h"
#include "histfile.h"
#include "record.h"
#include "history.h"
#include "shared.h"
#include "bracket.h"
#include "faststamp/config.h"
#include "internal.h"
#include "arch.h"
#include "backend.h"
#include "calib.h"
#include "clock.h"
#include "attach.h"
#include "freq.h"
#include "now.h"
#include "resolution.h"
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
/* The cold part that a new source forgets: one assignment (reset_locked). */
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
/* The one object, the hot part of which is the only state of the library's hot data
 * section besides rule 12's lines (fresh.c). */
struct fts__clock fts__clock_pc FTS__HOT_DATA = {
	.hot.src = { .counter = fts__hw_counter, .realtime = fts__hw_realtime,
		     .clocks = fts__hw_clocks, .read = fts__hw_clock, .epoch = fts__hw_epoch },
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.period_ns = SAMPLER_PERIOD_NS,
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
/* Has the process samples of its own? (Its histories, emptied by a reset, stay.) */
static int own_history(void)
{
	return fts_calib_count(realtime_hist()) > 0;
}

/* What conversions see changed: a line made from it before (fresh.h) is not used. */
static void view_changed(void)
{
	__atomic_fetch_add(&pc->hot.generation, 1, __ATOMIC_RELEASE);
}

static int needs_proof(void);
static enum fts__relation relation(void);

/* New offsets between CPUs: rule 12's line (fresh.c) holds the old ones. */
static void skew_set(int64_t v)
{
	__atomic_store_n(&pc->hot.skew_ns, v, __ATOMIC_RELAXED);
	view_changed();
}

/* With lock held: the proof as the source starts, needed or not. */
static void proof_reset(void)
{
	struct proof *proof = &pc->of.proof;

	pc->of.proof = (struct proof){ .cpu = -1 };
	proof->state = needs_proof() ? PROOF_PENDING : PROOF_NONE;
	snprintf(proof->text, sizeof(proof->text), "%s",
		 proof->state == PROOF_PENDING ? "pending: the warp test runs at the first calibration"
		 : relation() == FTS__CS_IS_COUNTER ? "not needed: the kernel keeps time with the counter"
						   : "not needed: new stamps are clock readings");
	skew_set(0);
}

static void proof_reset_once(void)
{
	if (pc->of.proof.state == PROOF_UNSET)
		proof_reset();
}

/* What a reset forgets: a fork's child, the threads (none of the parent's runs in it);
 * a new source, all it was and found too: its history, samples, events, fault, proof. */
enum reset { RESET_THREADS, RESET_SOURCE };

static void store_choice(void);

/* The one reset of the process clock, with lock held (or in a fork's child). The
 * cold part is one assignment; of the hot part, a new source starts with no sampler,
 * no samples (its histories emptied in place: readers may hold them), no rate, no
 * fault, no offsets between CPUs (proof_reset) and a new generation; the source and
 * the used flag are the caller's. The attach.c part looks again for the shared
 * history. */
static void reset_locked(enum reset what)
{
	__atomic_store_n(&pc->hot.running, 0, __ATOMIC_RELAXED);
	if (what == RESET_THREADS) {
		pc->of.retry_at = pc->of.retry_gap = 0;
		pc->alive = 0;   /* threads do not survive fork */
		return;
	}
	pc->of = (struct clock_cold){ .proof.cpu = -1 };
	fts__attach_reset(&pc->hot.attach, &pc->attach);
	view_changed();
	pc->source_gen++;   /* a sampler thread of the old source stops when it wakes */
	for (int k = 0; k < FTS__NCLK; k++)
		if (pc_hist(k))
			fts__calib_reset(pc_hist(k));
	__atomic_store_n(&pc->hot.period_ticks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pc->hot.res_ticks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pc->hot.taken, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pc->hot.faulted, 0, __ATOMIC_RELAXED);   /* a new source starts healthy, */
	proof_reset();   /* and unproven */
	store_choice();
}

/* Fork must not land inside a history write: the child would inherit a writer half way
 * through an add, and the lock held by a thread it does not have. The writer holds the
 * lock across every write; fork takes it first. */
static void before_fork(void)
{
	pthread_mutex_lock(&pc->lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&pc->lock);
}

static void after_fork_child(void)
{
	pthread_mutex_init(&pc->lock, NULL);
	reset_locked(RESET_THREADS);
	fts__record_drop_inherited();
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

static enum fts__relation relation(void)
{
	const struct fts__source *src = &pc->hot.src;

	return src->counter == fts__hw_counter ? fts__backend_choice()->arch.relation : src->relation;
}

/* Does the counter of this source need the proof across CPUs? */
static int needs_proof(void)
{
	if (fts__clock_uses_hw() && (!FTS__HAVE_COUNTER || !fts__backend_choice()->store_counter))
		return 0;
	return relation() != FTS__CS_IS_COUNTER;
}

/* New stamps use the counter when it was chosen, is proven (or need not be) and no
 * fault was found. */
static void store_choice(void)
{
	struct proof *proof = &pc->of.proof;
	int ok = !pc_faulted() && proof->state != PROOF_WARPED && proof->state != PROOF_NO_RUN &&
		 fts__backend_choice()->store_counter;
	__atomic_store_n(&fts__store_counter, ok, __ATOMIC_RELAXED);
}

/* New stamps stop using the counter, and the history stops growing. */
static void fault(const char *why)
{
	struct judged *judged = &pc->of.judged;

	__atomic_store_n(&pc->hot.faulted, 1, __ATOMIC_RELAXED);
	view_changed();
	snprintf(judged->fault_reason, sizeof(judged->fault_reason), "%s", why);
	__atomic_store_n(&fts__store_counter, 0, __ATOMIC_RELAXED);
}


/* With lock held: run the warp test if the counter needs it and has none yet (or the
 * last one could not run and its retry is due). A warp wider than a sample's bracket
 * keeps new stamps off the counter; every counter stamp's bound then covers the
 * offsets the test found (skew_ns), set once the counter's rate is known. */
static int prove_locked(void)
{
	const struct fts__source *src = &pc->hot.src;
	struct proof *proof = &pc->of.proof;
	struct fts__cbracket br;
	int64_t now = 0;
	int rc;

	proof_reset_once();
	fts__now(CLOCK_MONOTONIC, &now);
	if (proof->state == PROOF_NO_RUN && now < proof->retry_at)
		return -EAGAIN;
	if (proof->state != PROOF_PENDING && proof->state != PROOF_NO_RUN)
		return 0;
	if ((rc = (src->cpus ? src->cpus : fts__hw_cpus)(src->ctx, &proof->cpus)) < 0 ||
	    (rc = (src->warp ? src->warp : fts__hw_warp)(src->ctx, &proof->cpus, &proof->w)) < 0 ||
	    (rc = fts__cbracket_read(src->counter, src->realtime, src->ctx, SAMPLE_TRIES, &br)) < 0) {
		/* retried as a sampler thread is: after 1 s, 2 s, ... up to 64 s */
		proof->retry_gap = proof->retry_gap ? 2 * proof->retry_gap : RETRY_MIN_NS;
		if (proof->retry_gap > RETRY_MAX_NS)
			proof->retry_gap = RETRY_MAX_NS;
		proof->state = PROOF_NO_RUN;
		proof->retry_at = now + proof->retry_gap;
		snprintf(proof->text, sizeof(proof->text), "could not run (%s): new stamps use "
			 "clock_gettime, counter stamps wait for it (retried)", strerror(-rc));
		skew_set(-1);
		store_choice();
		return rc;
	}
	proof->bracket = br.a - br.b;
	proof->state = proof->w.warp > proof->bracket ? PROOF_WARPED : PROOF_DONE;
	skew_set(0);
	if (proof->w.warp)
		snprintf(proof->text, sizeof(proof->text), "%s: %d CPUs, the counter went back %llu "
			 "ticks between CPU %d and the first (a sample's bracket: %llu ticks)",
			 proof->state == PROOF_WARPED ? "warp found, new stamps use clock_gettime"
						      : "proven with a warp inside a bracket",
			 proof->w.cpus, (unsigned long long)proof->w.warp, proof->w.worst_cpu,
			 (unsigned long long)proof->bracket);
	else
		snprintf(proof->text, sizeof(proof->text), "proven: %d CPUs, no backward step "
			 "(offsets within %llu ticks), %.2f ms", proof->w.cpus,
			 (unsigned long long)proof->w.spread, (double)proof->w.cost_ns / 1e6);
	store_choice();
	return 0;
}

static long double ns_of(uint64_t ticks);

/* With lock held: the bound's share for offsets between CPUs grows to ns (it never
 * shrinks: stamps taken before keep theirs covered). */
static void skew_raise_locked(int64_t ns)
{
	if (ns > pc_skew_ns())
		skew_set(ns);
}

/* With lock held, once the counter's rate is known: the offsets the warp test could
 * not rule out, in ns. Its spread covers a warp it saw, and also an offset smaller
 * than a hand-over's latency, which it cannot see: that latency is its floor. The
 * spread bounds each CPU's offset from the first, so two others may differ by twice
 * it. */
static void skew_update_locked(void)
{
	struct proof *proof = &pc->of.proof;

	if ((proof->state == PROOF_DONE || proof->state == PROOF_WARPED) && proof->w.spread &&
	    pc->of.judged.health.ticks_per_ns > 0)
		skew_raise_locked((int64_t)ns_of(proof->w.spread) * (proof->w.pairs > 1 ? 2 : 1) + 1);
}

/* With lock held: a healthy sample taken on another CPU than the one before. An
 * offset between the two too small to be a fault (health.c) widens the bound at once;
 * after a round of the CPUs, half the round's sum does: any two CPUs are joined by
 * the shorter of the two ways round, whose offsets add up to at most that. A visit
 * that measured nothing starts the round again. */
static void skew_visit_locked(const struct fts__seen *e)
{
	struct proof *proof = &pc->of.proof;

	if (!e->moved_ns) {
		proof->round_moved = proof->round_visits = 0;
		return;
	}
	skew_raise_locked(e->moved_ns);
	proof->round_moved += e->moved_ns;
	if (++proof->round_visits < CPU_COUNT(&proof->cpus))
		return;
	skew_raise_locked((proof->round_moved + 1) / 2);
	proof->round_moved = proof->round_visits = 0;
}

/* With lock held: pin the calling thread (the sampler) to cpu. 0, or -1. */
static int move_locked(int cpu)
{
	const struct fts__source *src = &pc->hot.src;
	struct proof *proof = &pc->of.proof;

	if ((src->migrate ? src->migrate : fts__hw_migrate)(src->ctx, cpu) < 0)
		return -1;
	proof->cpu = cpu;
	proof->mover = pthread_self();
	return 0;
}

/* With lock held: the CPU after the one the sampler is on among those the counter was
 * proven on, or -1 (not proven, or one CPU). */
static int next_cpu_locked(void)
{
	struct proof *proof = &pc->of.proof;

	if (proof->state != PROOF_DONE || CPU_COUNT(&proof->cpus) < 2)
		return -1;
	for (int i = 1; i <= CPU_SETSIZE; i++) {
		int cpu = (proof->cpu + i + CPU_SETSIZE) % CPU_SETSIZE;
		if (CPU_ISSET(cpu, &proof->cpus))
			return cpu;
	}
	return -1;
}

/* Without the lock: the calling thread (the sampler) moves to the next CPU. A move
 * returns once that CPU runs the thread, which on a CPU kept busy by a thread of the
 * program takes a scheduler's slice (3 ms measured beside a pinned thread that never
 * sleeps): not a wait for the lock's other users (conversions, the event drain). */
static void move_next(void)
{
	struct proof *proof = &pc->of.proof;
	int (*migrate)(void *, int);
	void *ctx;
	unsigned gen;
	int cpu;

	pthread_mutex_lock(&pc->lock);
	cpu = next_cpu_locked();
	migrate = pc->hot.src.migrate ? pc->hot.src.migrate : fts__hw_migrate;
	ctx = pc->hot.src.ctx;
	gen = pc->source_gen;
	pthread_mutex_unlock(&pc->lock);
	if (cpu < 0 || migrate(ctx, cpu) < 0)
		return;
	pthread_mutex_lock(&pc->lock);
	if (gen == pc->source_gen) {   /* else the proof was reset meanwhile */
		proof->cpu = cpu;
		proof->mover = pthread_self();
	}
	pthread_mutex_unlock(&pc->lock);
}

/* Rule 1 on a coarse clock: what a read returns the clock held since its last tick, up
 * to a resolution before the read. The bracket begins that much earlier. */
static inline uint64_t res_widen(uint64_t b)
{
	uint64_t q = __atomic_load_n(&pc->hot.res_ticks, __ATOMIC_RELAXED);

	return b > q ? b - q : 0;
}

/* The narrowest of tries brackets of clock k by the counter (res_widen). 0 or a
 * negative errno. */
static int bracket_clock(int k, int tries, struct fts__cbracket *out)
{
	const struct fts__source *src = &pc->hot.src;
	int got = 0, rc = -EAGAIN;

	for (int i = 0; i < tries; i++) {
		uint64_t b = src_counter(), a;
		int64_t ns;
		rc = k == FTS__CLK_REALTIME ? src->realtime(src->ctx, &ns) : src->read(src->ctx, k, &ns);
		a = src_counter();
		if (rc < 0 || a < b)
			continue;
		if (!got || a - b < out->a - out->b) {
			*out = (struct fts__cbracket){ .b = b, .a = a, .ns = ns };
			got = 1;
		}
	}
	if (!got)
		return rc < 0 ? rc : -EAGAIN;
	out->b = res_widen(out->b);
	return 0;
}

static int take(struct fts__psample *s)
{
	const struct fts__source *src = &pc->hot.src;
	struct proof *proof = &pc->of.proof;
	struct fts__cbracket r;
	int rc = bracket_clock(FTS__CLK_REALTIME, SAMPLE_TRIES, &r), got = 0;

	if (rc < 0)
		return rc;
	s->b = r.b;
	s->a = r.a;
	s->rt = r.ns;
	s->cpu = proof->cpu >= 0 && pthread_equal(proof->mover, pthread_self()) ? proof->cpu : -1;
	/* the health reads too, in the narrowest of their brackets: a CPU's offset is told
	 * to within them (health.c) */
	for (int i = 0; i < SAMPLE_TRIES; i++) {
		struct fts__clocks clk;
		uint64_t hb = src_counter(), ha;
		rc = src->clocks(src->ctx, &clk);
		ha = src_counter();
		if (rc < 0 || ha < hb)
			continue;
		if (!got || ha - hb < s->ha - s->hb) {
			s->hb = hb;
			s->ha = ha;
			s->clk = clk;
			got = 1;
		}
	}
	if (!got)
		return rc < 0 ? rc : -EAGAIN;
	s->k[FTS__CLK_REALTIME] = r;
	for (int k = FTS__CLK_REALTIME + 1; k < FTS__NCLK; k++)
		if ((rc = bracket_clock(k, SAMPLE_TRIES, &s->k[k])) < 0)
			return rc;
	return 0;
}

static long double ns_of(uint64_t ticks)
{
	struct judged *judged = &pc->of.judged;

	/* ticks at the rate against MONOTONIC_RAW, 0 until it is known */
	return judged->health.ticks_per_ns > 0 ? (long double)ticks / judged->health.ticks_per_ns : 0;
}

/* With lock held: " on CPU n" where the sampler moves between CPUs. */
static const char *cpu_note(const struct fts__psample *s)
{
	static char note[24];

	if (s->cpu < 0 || pc->of.proof.state != PROOF_DONE)
		return "";
	snprintf(note, sizeof(note), " on CPU %d", s->cpu);
	return note;
}

/* Judge s against the samples before it (health.c), and learn from it when healthy:
 * the events it found are counted, the counter's rate against MONOTONIC_RAW kept. */
static enum fts__verdict check(const struct fts__psample *s, struct fts__seen *e, char *why,
			       size_t len)
{
	struct judged *judged = &pc->of.judged;
	int watch = pc->of.proof.state >= PROOF_PENDING && relation() == FTS__CS_FROM_COUNTER;
	enum fts__verdict v = fts__health_judge(&judged->health, s, watch, cpu_note(s), e, why, len);

	if (v != FTS__HEALTHY)
		return v;
	judged->suspends += (uint64_t)e->suspend;
	judged->steps += (uint64_t)e->step;
	if (e->suspend || e->step || e->ran_on)
		judged->ambiguous_ns = e->awake_ns;   /* awake time: no stamp is taken asleep */
	fts__health_learn(&judged->health, s, e);
	if (judged->health.ticks_per_ns > 0)
		__atomic_store_n(&pc->hot.period_ticks, (uint64_t)(judged->health.ticks_per_ns * SAMPLER_PERIOD_NS),
				 __ATOMIC_RELAXED);
	return v;
}

/* With lock held. Take a sample and add it to the history (and the record). why: a
 * reason to stop trusting the counter found before sampling (the kernel left its
 * clocksource), or NULL. */
static int sample_locked(const char *why)
{
	struct judged *judged = &pc->of.judged;
	struct fts__psample s;
	struct fts__seen e;
	enum fts__verdict v;
	char found[128];
	int rc, off;
	uint32_t steps;

	if (pc_faulted())
		return -EIO;
	for (int k = 0; k < FTS__NCLK; k++) {
		if (!pc_hist(k)) {
			struct fts_calib *c = fts_calib_new();
			if (!c)
				return -ENOMEM;
			__atomic_store_n(&pc->hot.hists[k], c, __ATOMIC_RELEASE);
		}
	}
	if ((rc = take(&s)) < 0)
		return rc;
	v = check(&s, &e, found, sizeof(found));
	off = v != FTS__HEALTHY;
	/* Found off just after the sampler moved to another CPU, the counter may be off on
	 * that CPU alone: a sample back on the CPU before tells. Healthy, it is the one the
	 * history takes, and the other stays out (the stamps taken on the CPU found wanting
	 * since it went off are the detection window's, see faststamp.h); faulty too, the
	 * counter jumped on both, and the sample back joins the history as a break. With no
	 * sample back, the history ends where it was. */
	if (v == FTS__FAULT_KEEP && s.cpu >= 0 && judged->health.last.cpu >= 0 && s.cpu != judged->health.last.cpu) {
		struct fts__psample back;
		char wb[sizeof(found)];

		v = FTS__FAULT_DROP;
		if (move_locked(judged->health.last.cpu) == 0 && take(&back) == 0 &&
		    (v = check(&back, &e, wb, sizeof(wb))) != FTS__FAULT_DROP)
			s = back;
	}
	skew_update_locked();
	if (!off && s.cpu >= 0 && judged->health.have_last &&
	    judged->health.last.cpu >= 0 && s.cpu != judged->health.last.cpu)
		skew_visit_locked(&e);
	/* The sampler saw the step (or the sleep, which steps the wall clock against a
	 * counter that stopped or ran on): the history is told, and need not guess. A
	 * counter that jumped the history finds itself (calib.c, rule 3). */
	/* Each clock is told of the events that move it against the counter (rule 13). */
	steps = fts__rule13_moved(e.step, e.tai_step, e.suspend, e.ran_on);
	if (v != FTS__FAULT_DROP &&
	    fts__calib_add_sample(realtime_hist(), s.b, s.rt, s.a, steps >> FTS__CLK_REALTIME & 1) < 0 &&
	    v == FTS__HEALTHY)
		return -EAGAIN;
	for (int k = FTS__CLK_REALTIME + 1; v != FTS__FAULT_DROP && k < FTS__NCLK; k++)
		fts__calib_add_sample(pc_hist(k), s.k[k].b, s.k[k].ns, s.k[k].a, steps >> k & 1);
	if (v != FTS__FAULT_DROP)
		fts__record_sample(&s, steps);
	if (e.step)
		fts__record_event(FTS__EV_STEP, &s, e.step_ns, "the wall clock was set");
	if (e.suspend)
		fts__record_event(FTS__EV_SUSPEND, &s, e.suspend_ns, "the machine slept");
	judged->health.last = s;
	judged->health.have_last = 1;
	__atomic_store_n(&pc->hot.taken, pc_taken() + 1, __ATOMIC_RELAXED);
	if (off)
		fault(found);
	else if (why)
		fault(why);
	if (pc_faulted())
		fts__record_event(FTS__EV_FAULT, &s, 0, judged->fault_reason);
	return pc_faulted() ? -EIO : 0;
}

int fts__clock_clocksource(char *out, size_t len)
{
	const struct fts__source *src = &pc->hot.src;

	return src->clocksource ? src->clocksource(src->ctx, out, len) : fts__clocksource(out, len);
}

/* With lock held: has the kernel left the clocksource it had when the counter was
 * chosen? Then why gets the reason and 1 is returned. */
static int switched_locked(char *why, size_t len)
{
	const struct fts__choice *ch = fts__backend_choice();
	char now[32];

	if (pc_faulted() || !ch->store_counter || !ch->clocksource[0])
		return 0;
	if (fts__clock_clocksource(now, sizeof(now)) < 0 || !strcmp(now, ch->clocksource))
		return 0;
	snprintf(why, len, "the kernel's clocksource changed from %s to %s", ch->clocksource, now);
	return 1;
}

int fts__clock_sample(void)
{
	int rc;
	pthread_mutex_lock(&pc->lock);
	rc = sample_locked(NULL);
	pthread_mutex_unlock(&pc->lock);
	return rc;
}

/* With lock held: a sampler round. A warp test that could not run is retried when
 * due; then a sample. The sampler moves to the next CPU between rounds (move_next). */
static int round_locked(const char *why)
{
	prove_locked();
	return sample_locked(why);
}

int fts__clock_round(void)
{
	int rc;
	move_next();
	pthread_mutex_lock(&pc->lock);
	rc = round_locked(NULL);
	pthread_mutex_unlock(&pc->lock);
	return rc;
}

int fts__clock_prove(void)
{
	int rc;
	pthread_mutex_lock(&pc->lock);
	rc = prove_locked();
	pthread_mutex_unlock(&pc->lock);
	return rc;
}

FTS__HOT int64_t fts__clock_skew_ns(void)
{
	if (fts__attach_in_use(&pc->hot.attach))
		return fts__attach_skew_ns(&pc->hot.attach);
	return pc_skew_ns();
}

int fts__clock_watch(void)
{
	char why[128];
	int rc = 0;

	pthread_mutex_lock(&pc->lock);
	if (switched_locked(why, sizeof(why)))
		rc = sample_locked(why);
	pthread_mutex_unlock(&pc->lock);
	return rc == -EIO ? -EIO : 0;
}

/* ---- the sampler thread ---------------------------------------------------------- */

/* A timerfd the kernel cancels when CLOCK_REALTIME is set; -1 if unavailable. */
static int step_watch_open(void)
{
	int fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec far = { { 0, 0 }, { 0, 0 } };
	struct timespec now;

	if (fd < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	far.it_value.tv_sec = now.tv_sec + 10 * 365 * 86400;   /* never expires */
	if (timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &far, NULL) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Wait until CLOCK_MONOTONIC reaches deadline; 1 as soon as the wall clock is set. */
static int step_wait(int *fd, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = *fd, .events = POLLIN };
		int64_t now;
		uint64_t v;

		if (fts__now(CLOCK_MONOTONIC, &now) < 0 || now >= deadline)
			return 0;
		if (*fd < 0) {
			fts__sleep_until(deadline);
			return 0;
		}
		struct timespec t = fts__timespec(deadline - now);
		if (ppoll(&p, 1, &t, NULL) <= 0)
			continue;
		if (read(*fd, &v, sizeof(v)) < 0 && errno == ECANCELED) {
			close(*fd);
			*fd = step_watch_open();
			return 1;
		}
	}
}

static void *sampler(void *arg)
{
	const struct fts__source *src = &pc->hot.src;
	int idle = 0, fd = -1;
	unsigned gen = (unsigned)(uintptr_t)arg;
	/* Samples are due every period_ns on a fixed grid (a round woken late does not
	 * push the next one back); a publisher also beats at least every
	 * FTS__SHM_BEAT_NS. A round wakes at whichever comes first. */
	int64_t due = 0, beat = 0;

	/* Prompt wake-ups keep the span of ambiguity after a step short. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (!src->wait) {
		fd = step_watch_open();
		fts__now(CLOCK_MONOTONIC, &due);
		beat = due + FTS__SHM_BEAT_NS;
		due += pc->period_ns;
	}
	for (;;) {
		char why[128];
		int switched, stepped = 0, moving;
		int64_t now = 0;

		if (src->wait)
			src->wait(src->ctx, SAMPLER_PERIOD_NS);
		else
			stepped = step_wait(&fd, due < beat ? due : beat);
		pthread_mutex_lock(&pc->lock);
		/* A conversion since the last round, a record to keep, or a history to
		 * publish: not idle. */
		if (__atomic_exchange_n(&pc->hot.used, 0, __ATOMIC_RELAXED) || fts__record_on() || fts__record_tapping() ||
		    fts__attach_serving(&pc->attach))
			idle = 0;
		else
			idle++;
		if (idle >= SAMPLER_IDLE_ROUNDS || src->no_thread || pc_faulted() || gen != pc->source_gen) {
			if (gen == pc->source_gen)   /* else a new source may have its own thread */
				__atomic_store_n(&pc->hot.running, 0, __ATOMIC_RELAXED);
			pc->alive--;
			pthread_mutex_unlock(&pc->lock);
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		switched = switched_locked(why, sizeof(why));
		if (fts__now(CLOCK_MONOTONIC, &now) < 0)
			now = due;   /* never fails; were it to, a sample a period */
		if ((moving = src->wait || stepped || switched || now >= due)) {
			round_locked(switched ? why : NULL);
			if (pc->after_round)
				pc->after_round();
			if (now >= due)   /* the next on the grid; none to catch up */
				due = now - due >= pc->period_ns ? now + pc->period_ns : due + pc->period_ns;
		}
		beat = now + FTS__SHM_BEAT_NS;
		fts__attach_serve_round(&pc->attach, pc_faulted(), pc->of.judged.fault_reason,
					src_counter());
		if (fts__now(CLOCK_MONOTONIC, &now) == 0 && fts__record_due(now))
			fts__record_flush();
		pthread_mutex_unlock(&pc->lock);
		if (moving)   /* the next round on the next CPU */
			move_next();
	}
}

/* With lock held: start the sampler thread if it may be started now. It takes none of
 * the program's signals: it is created with all of them blocked. */
static void start_thread_locked(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int64_t now;
	pthread_t t;
	int rc;

	if (pc_running() || pc->hot.src.no_thread || pc_faulted())
		return;
	if (fts__now(CLOCK_MONOTONIC, &now) < 0 || now < pc->of.retry_at)
		return;
	if (pthread_attr_init(&attr))
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pc->thread_starts++;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &attr, sampler, (void *)(uintptr_t)pc->source_gen);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc == 0) {
		__atomic_store_n(&pc->hot.running, 1, __ATOMIC_RELAXED);
		pc->alive++;
		pc->of.retry_gap = 0;
	} else {
		pc->of.retry_gap = pc->of.retry_gap ? pc->of.retry_gap * 2 : RETRY_MIN_NS;
		if (pc->of.retry_gap > RETRY_MAX_NS)
			pc->of.retry_gap = RETRY_MAX_NS;
		pc->of.retry_at = now + pc->of.retry_gap;
	}
}

/* With lock held: the clocks' resolution, once a source (resolution.c). All the
 * kernel's clocks are computed from one clocksource: CLOCK_REALTIME's tells. */
static void probe_resolution_locked(void)
{
	const struct fts__source *src = &pc->hot.src;
	uint64_t ticks;

	if (pc->of.res_probed)
		return;
	pc->of.res_probed = 1;
	pc->of.res_ns = fts__res_probe(src->counter, src->realtime, src->ctx, &ticks);
	__atomic_store_n(&pc->hot.res_ticks, ticks, __ATOMIC_RELAXED);
}

/* The first samples' spacing: FIRST_GAP_NS, longer on a coarse clock, never past the
 * sampler's period. */
static int64_t first_gap_ns(void)
{
	int64_t g = pc->of.res_ns * FIRST_GAP_PER_RES;

	return g < FIRST_GAP_NS ? FIRST_GAP_NS : g > SAMPLER_PERIOD_NS ? SAMPLER_PERIOD_NS : g;
}

/* With lock held: make sure the history has three samples and the sampler runs. */
static int start_locked(void)
{
	const struct fts__source *src = &pc->hot.src;
	int rc = 0;

	pthread_once(&atfork_once, register_atfork);
	/* No counter: stamps are clock readings, which need no history. */
	if (!FTS__HAVE_COUNTER && src->counter == fts__hw_counter)
		return 0;
	/* Before conversions rely on a counter the kernel does not keep time with: the
	 * warp test (not fatal: new stamps then use the clock until it runs) */
	prove_locked();
	probe_resolution_locked();
	/* Three samples: two intervals, so that each has a neighbour to give the rate. */
	while (fts_calib_count(realtime_hist()) < 3) {
		if (fts_calib_count(realtime_hist())) {
			if (src->sleep) {
				src->sleep(src->ctx, first_gap_ns());
			} else {
				int64_t now;
				if (fts__now(CLOCK_MONOTONIC, &now) == 0)
					fts__sleep_until(now + first_gap_ns());
			}
		}
		if ((rc = sample_locked(NULL)) < 0)
			return rc;
	}
	start_thread_locked();
	return 0;
}

/* ---- what attach.c asks of the process clock ------------------------------------- */

static int counter_in_use(void)
{
	return fts__clock_uses_hw() && FTS__HAVE_COUNTER && fts__store_counter && !pc_faulted();
}

FTS__HOT static uint64_t counter_now(void)
{
	return src_counter();
}

static void clock_id(struct fts__head *h, int with_hz);

static const struct fts__attach_clock attach_clock = {
	.counter_in_use = counter_in_use, .clock_id = clock_id, .needs_proof = needs_proof,
	.counter = counter_now,
};

/* With lock held, before a history is made: the first call looks for the machine's
 * shared history. 1 while the process uses it. */
static int attach_locked(void)
{
	int was = fts__attach_in_use(&pc->hot.attach);
	int now = fts__attach_locked(&pc->hot.attach, &pc->attach, own_history(), &attach_clock);

	if (now && !was) {
		view_changed();
		probe_resolution_locked();   /* for the bridge's reads (read_line) */
	}
	return now;
}

/* In use: do its samples reach newest, or is its publisher alive? 1; else 0, and the
 * process has left it. */
FTS__HOT static int attach_covers(uint64_t newest)
{
	char why[160];

	if (fts__attach_covers(&pc->hot.attach, newest, counter_now, why, sizeof(why)))
		return 1;
	fts__clock_leave_shared(why);
	return 0;
}

FTS__HOT static void note_use(void)
{
	if (!__atomic_load_n(&pc->hot.used, __ATOMIC_RELAXED))
		__atomic_store_n(&pc->hot.used, 1, __ATOMIC_RELAXED);
}

/* What the process clock's history is of: the counter's kind, this boot, the
 * clocksource; and its frequency if with_hz (which may measure it: 10 ms). */
static void clock_id(struct fts__head *h, int with_hz)
{
	const struct fts__choice *ch = fts__backend_choice();

	*h = (struct fts__head){ .kind = FTS__KIND_OTHER };
	for (uint32_t k = FTS__KIND_OTHER + 1; FTS__HAVE_COUNTER && k < FTS__KIND_N; k++)
		if (!strcmp(ch->arch.backend, fts__kind_names[k]))
			h->kind = k;
	if (with_hz)
		h->counter_hz = fts__freq(NULL, 0);
	fts__boot_id(h->boot_id);
	snprintf(h->clocksource, sizeof(h->clocksource), "%s", ch->clocksource);
	fts__now(CLOCK_REALTIME, &h->created_ns);
}

FTS__HOT int fts__clock_prepare(uint64_t newest)
{
	const struct fts_calib *h = realtime_hist();
	uint64_t c1 = 0;
	int rc;

	note_use();
	/* stamps the shared history holds convert whatever its publisher does; a newer
	 * one needs it alive */
	if (fts__attach_in_use(&pc->hot.attach) && attach_covers(newest))
		return 0;
	/* The common case in two loads: a history kept fresh by the sampler thread; without
	 * the thread, one counter read more tells whether the history is due for a sample. */
	if (h && (c1 = fts__calib_newest_counter(h)) &&
	    (pc_running() ||
	     src_counter() <= c1 + pc_period_ticks()))
		return 0;
	pthread_mutex_lock(&pc->lock);
	if (attach_locked()) {
		pthread_mutex_unlock(&pc->lock);
		return 0;
	}
	rc = start_locked();
	/* Another thread may have sampled while we waited. */
	if (rc == 0 && !pc_running() && fts__calib_newest_counter(realtime_hist()) == c1)
		rc = sample_locked(NULL);
	pthread_mutex_unlock(&pc->lock);
	/* A failed refresh still leaves an extrapolation, if there is a history. */
	if (rc < 0 && fts_calib_count(fts__clock_history(FTS__CLK_REALTIME)) >= 2)
		rc = 0;
	return rc;
}

/* A clock read now, bracketed by counter reads, as a line at the tail's band: what the
 * clock read at a counter value before it lies within its bound, if the clock kept the
 * band since (the bridge, rule 11). */
FTS__HOT static int read_line(int k, const struct fts__line *tail, struct fts__line *m)
{
	const struct fts__source *src = &pc->hot.src;
	uint64_t b, a;
	int64_t rt;

#if FTS__HAVE_COUNTER
	/* The hardware's, inline: the read before may run early (a wider bracket, still
	 * around the clock read), the one after is ordered. */
	if (src->counter == fts__hw_counter) {
		b = fts__counter_read_relaxed() & ~FTS_STAMP_CLOCK_TAG;
		if (fts__now(fts__hw_clk_id(k), &rt) < 0)
			return -1;
		a = fts__counter_read() & ~FTS_STAMP_CLOCK_TAG;
	} else
#endif
	{
		b = src_counter();
		if ((k == FTS__CLK_REALTIME ? src->realtime(src->ctx, &rt) : src->read(src->ctx, k, &rt)) < 0)
			return -1;
		a = src_counter();
	}
	if (a < b)
		return -1;
	b = res_widen(b);
	*m = *tail;
	m->c0 = m->c1 = b + (a - b) / 2;
	m->r0 = rt;
	/* rule 1: the read lay within half the bracket of its middle, at the fastest rate */
	m->err = (uint64_t)fts__mulshift((a - b + 1) / 2, tail->mult + tail->grow, tail->shift) + 1;
	m->flags = 0;
	return 0;
}

FTS__HOT int fts__clock_epoch(int64_t *e)
{
	const struct fts__source *src = &pc->hot.src;

	return src->epoch && src->epoch(src->ctx, e) == 0 ? 0 : -1;
}

uint64_t fts__clock_counter_now(void)
{
	return pc_faulted() ? 0 : src_counter();
}

FTS__HOT int fts__clock_read(int k, const struct fts__line *fwd, struct fts__line *m)
{
	/* a counter found faulty is not read again */
	return pc_faulted() ? -1 : read_line(k, fwd, m);
}

int fts__clock_sample_to(int k, const struct fts_calib *h, uint64_t x)
{
	if (h != pc_hist(k))
		return 0;
	pthread_mutex_lock(&pc->lock);
	if (fts__calib_newest_counter(pc_hist(k)) < x)
		sample_locked(NULL);
	pthread_mutex_unlock(&pc->lock);
	return 1;
}

void fts__clock_on_round(void (*fn)(void))
{
	pc->after_round = fn;
}

int fts_clock_start(void)
{
	int rc = 0;
	pthread_mutex_lock(&pc->lock);
	if (!attach_locked())
		rc = start_locked();
	pthread_mutex_unlock(&pc->lock);
	note_use();
	if (rc < 0)
		return fts__fail(-rc);
	return 0;
}

/* ---- history files --------------------------------------------------------------- */

int fts_clock_save(int fd)
{
	struct fts__head h;
	int rc;

	if (fd < 0)
		return fts__fail(EINVAL);
	clock_id(&h, 1);   /* outside the lock: it may measure the frequency (10 ms) */
	pthread_mutex_lock(&pc->lock);
	{
		/* every clock's, at one sample (under the lock the sampler adds under); an
		 * earlier build's shared history holds CLOCK_REALTIME's alone */
		const struct fts_calib *c[FTS__NCLK];
		for (int k = 0; k < FTS__NCLK; k++)
			c[k] = fts__clock_history(k);
		rc = fts__calib_save_clocks(c, fd, &h);
	}
	pthread_mutex_unlock(&pc->lock);
	return rc < 0 ? fts__fail(-rc) : 0;
}

int fts_clock_record(const char *path)
{
	struct fts__head h;
	struct fts__record_file f;
	int busy, rc = 0;

	if (!path) {
		pthread_mutex_lock(&pc->lock);
		/* a last sample, so that every stamp stored while recording lies inside what
		 * the file holds, not past its end (a failed one leaves the file as it was) */
		if (fts__record_on())
			(void)sample_locked(NULL);
		rc = fts__record_stop();
		pthread_mutex_unlock(&pc->lock);
		return rc ? fts__fail(rc) : 0;
	}
	/* Without a counter (a build without one, or the generic backend chosen at
	 * start), stamps are clock readings: there is nothing to record. */
	pthread_mutex_lock(&pc->lock);
	rc = fts__clock_uses_hw() && (!FTS__HAVE_COUNTER || !fts__backend_choice()->store_counter);
	busy = fts__record_on();
	pthread_mutex_unlock(&pc->lock);
	if (rc)
		return fts__fail(ENOTSUP);
	if (busy)   /* before the file is touched: a refused call leaves nothing behind */
		return fts__fail(EBUSY);
	/* A record is of this process's own samples: a shared history is left for them. */
	fts__clock_leave_shared("recording with fts_clock_record");
	clock_id(&h, 1);
	if ((rc = fts__record_open(path, &h, &f)) != 0)
		return fts__fail(rc);
	pthread_mutex_lock(&pc->lock);
	if ((rc = fts__record_begin(&f)) == 0) {
		/* calibrated at once, and a first sample in the file taken now, so that
		 * every stamp stored from now on lies inside what the file holds */
		uint64_t before = pc_taken();
		fts__attach_never(&pc->attach);
		if ((rc = start_locked()) == 0 && pc_taken() == before)
			rc = sample_locked(NULL);
		rc = rc < 0 ? -rc : fts__record_started();
		if (rc)
			fts__record_abandon(&f);
	}
	pthread_mutex_unlock(&pc->lock);
	if (rc)
		fts__record_undo(&f);
	note_use();
	return rc ? fts__fail(rc) : 0;
}

/* ---- a trace's history ----------------------------------------------------------- */

static int counter_in_use_locked(void)
{
	return pc->hot.src.counter != fts__hw_counter ||
	       (FTS__HAVE_COUNTER && fts__backend_choice()->store_counter);
}

int fts__clock_tap_start(struct fts__head *h)
{
	int rc = 0, use;

	pthread_mutex_lock(&pc->lock);
	use = counter_in_use_locked();
	pthread_mutex_unlock(&pc->lock);
	clock_id(h, use);
	if (!use)
		return 0;
	/* a trace converts with this process's own samples, as a record does */
	fts__clock_leave_shared("tracing with fts_trace_start");
	pthread_mutex_lock(&pc->lock);
	fts__attach_never(&pc->attach);
	fts__record_tap(1);
	/* two samples in the trace: with them alone it converts every stamp after */
	for (int i = 0; i < 2 && rc == 0; i++) {
		if (i) {
			int64_t now;
			if (fts__now(CLOCK_MONOTONIC, &now) == 0)
				fts__sleep_until(now + first_gap_ns());
		}
		uint64_t before = pc_taken();
		if ((rc = start_locked()) == 0 && pc_taken() == before)
			rc = sample_locked(NULL);
	}
	if (rc)
		fts__record_tap(0);
	pthread_mutex_unlock(&pc->lock);
	note_use();
	return rc;
}

size_t fts__clock_tap_take(unsigned char **buf, int sample)
{
	size_t n;

	pthread_mutex_lock(&pc->lock);
	if (sample && fts__record_tapping())
		sample_locked(NULL);
	n = fts__record_tap_take(buf);
	pthread_mutex_unlock(&pc->lock);
	return n;
}

void fts__clock_tap_stop(void)
{
	pthread_mutex_lock(&pc->lock);
	fts__record_tap(0);
	pthread_mutex_unlock(&pc->lock);
}

/* ---- the seam for tests, and state for fts_get_info ------------------------------- */

void fts__clock_set_source(const struct fts__source *s)
{
	pthread_mutex_lock(&pc->lock);
	pc->hot.src = s ? *s : fts__hw_source;
	if (!pc->hot.src.clocks)
		pc->hot.src.clocks = fts__hw_clocks;
	if (!pc->hot.src.read)
		pc->hot.src.read = fts__hw_clock;
	reset_locked(RESET_SOURCE);
	pthread_mutex_unlock(&pc->lock);
}

FTS__HOT int fts__clock_uses_hw(void)
{
	return pc->hot.src.counter == fts__hw_counter;
}

void fts__clock_state(struct fts__clock_state *st)
{
	struct judged *judged = &pc->of.judged;
	pthread_mutex_lock(&pc->lock);
	st->samples_taken = pc_taken();
	st->running = pc_running();
	st->threads = pc->alive;
	st->thread_starts = pc->thread_starts;
	st->faulted = pc_faulted();
	snprintf(st->fault, sizeof(st->fault), "%s", judged->fault_reason);
	st->steps = judged->steps;
	st->suspends = judged->suspends;
	st->ambiguous_ns = judged->ambiguous_ns;
	proof_reset_once();
	snprintf(st->proof, sizeof(st->proof), "%s", pc->of.proof.text);
	st->skew_ns = fts__clock_skew_ns();
	st->res_ns = pc->of.res_ns;
	st->period_ns = pc->period_ns;
	fts__attach_state(&pc->hot.attach, st->proof, sizeof(st->proof), &st->period_ns);
	pthread_mutex_unlock(&pc->lock);
}

uint64_t fts__clock_samples_taken(void)
{
	return pc_taken();
}

/* ---- the machine's shared history (attach.c) ------------------------------------ */

FTS__HOT const struct fts_calib *fts__clock_history(int k)
{
	if (fts__attach_in_use(&pc->hot.attach))
		return fts__attach_view(&pc->hot.attach, k);
	return pc_hist(k);
}

FTS__HOT void fts__clock_view(int k, struct fts__clock_view *v)
{
	const struct fts__attached *a = &pc->hot.attach;

	v->cur = fts__clock_history(k);
	v->old = v->cur && v->cur == fts__attach_view(a, k) ? NULL : fts__attach_frozen(a, k);
}

int fts__clock_holds(int k)
{
	return !fts__attach_in_use(&pc->hot.attach) || fts__attach_view(&pc->hot.attach, k);
}

int fts__clock_leave_shared(const char *why)
{
	int left;

	pthread_mutex_lock(&pc->lock);
	if ((left = fts__attach_leave_locked(&pc->hot.attach, &pc->attach, why)))
		view_changed();
	pthread_mutex_unlock(&pc->lock);
	return left;
}

void fts__clock_sharing(char *source, size_t slen, char *path, size_t plen, char *note,
			size_t nlen)
{
	pthread_mutex_lock(&pc->lock);
	fts__attach_sharing(&pc->hot.attach, &pc->attach, own_history(), source, slen, path, plen,
			    note, nlen);
	pthread_mutex_unlock(&pc->lock);
}

int fts__clock_serve(const char *path, int64_t interval_ns, char *err, size_t errlen)
{
	struct proof *proof = &pc->of.proof;
	struct fts__head id;
	const cpu_set_t *cpus;
	uint32_t dircap;
	size_t len, recs;
	void *region;
	int rc;

	if (!FTS__HAVE_COUNTER || !fts__store_counter) {
		snprintf(err, errlen, "no counter in use, stamps are clock readings: nothing to "
			 "calibrate (%s)", FTS__HAVE_COUNTER ? fts__backend_choice()->arch.reason
							       : "a build without a counter");
		return -1;
	}
	clock_id(&id, 1);
	pthread_mutex_lock(&pc->lock);
	fts__attach_never(&pc->attach);   /* the publisher never reads another's */
	if (realtime_hist() || fts__calib_dims(NULL, &dircap, &len, &recs) < 0) {
		snprintf(err, errlen, "the process clock is already in use");
		pthread_mutex_unlock(&pc->lock);
		return -1;
	}
	if (fts__attach_serve_open(&pc->attach, path, &id, interval_ns, dircap, len, &region, err,
				   errlen) < 0) {
		pthread_mutex_unlock(&pc->lock);
		return -1;
	}
	pc->period_ns = interval_ns;
	for (int k = 0; k < FTS__NCLK; k++) {
		__atomic_store_n(&pc->hot.hists[k], fts__calib_new_at(NULL, (char *)region + (size_t)k *
								      fts__shm_stride(len), len),
				 __ATOMIC_RELEASE);
		if (!pc_hist(k))
			break;
	}
	if (!pc_hist(FTS__NCLK - 1)) {
		snprintf(err, errlen, "%s", strerror(errno));
		rc = -1;
	} else if ((rc = start_locked()) < 0) {
		snprintf(err, errlen, "the first samples: %s", strerror(-rc));
	} else if (proof->state == PROOF_WARPED || proof->state == PROOF_NO_RUN) {
		snprintf(err, errlen, "the counter across CPUs: %s", proof->text);
		rc = -1;
	} else {
		cpus = proof->state == PROOF_DONE ? &proof->cpus : NULL;
		rc = fts__attach_serve_show(&pc->attach, cpus, pc_skew_ns(),
					    src_counter(), err, errlen);
	}
	if (rc < 0)
		fts__attach_serve_stop(&pc->attach, err);
	pthread_mutex_unlock(&pc->lock);
	return rc < 0 ? -1 : 0;
}

int fts__clock_serve_news(unsigned *seq, char *buf, size_t len, int *failed)
{
	return fts__attach_serve_news(&pc->attach, seq, buf, len, failed);
}

void fts__clock_serve_stop(const char *why)
{
	pthread_mutex_lock(&pc->lock);
	fts__attach_serve_stop(&pc->attach, why);
	pthread_mutex_unlock(&pc->lock);
}
