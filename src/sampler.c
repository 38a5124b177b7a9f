/* sampler.c - the process clock's samples and the sampler thread that takes them,
 * moving from CPU to CPU.
 *
 * A sample is one CLOCK_REALTIME read bracketed by two counter reads (the narrowest of
 * a few tries): that is what the history gets. Then come the health reads, one
 * bracket around CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME and
 * CLOCK_MONOTONIC_RAW; the bracket's width bounds how far apart in time they were
 * read; and each other clock in a bracket of its own. Comparing them with the
 * previous sample's tells what happened in between:
 *  - the counter against CLOCK_MONOTONIC_RAW (in RAW's own bracket, one read wide),
 *    which no NTP adjustment, step or slew touches (on the counter's own clocksource
 *    it is the counter times a constant):
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
 *
 * Where the counter needs the proof across CPUs (proof.c), the sampler moves to the
 * next CPU it was proven on between rounds, so that its samples measure the offsets
 * between them; a sample found off just after a move is checked by one taken back on
 * the CPU before. The object these work on is clockobj.h's, under its lock; clock.c
 * calls in, and this file never calls clock.c.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "backend.h"
#include "bracket.h"
#include "calib.h"
#include "clockobj.h"
#include "estimate.h"
#include "health.h"
#include "internal.h"
#include "now.h"
#include "proof.h"
#include "record.h"
#include "reset.h"
#include "resolution.h"
#include "sampler.h"
#include "shared.h"

/* New stamps stop using the counter, and the history stops growing. */
static void fault(const char *why)
{
	struct judged *judged = &pc->of.judged;

	__atomic_store_n(&pc->hot.faulted, 1, __ATOMIC_RELAXED);
	view_changed();
	snprintf(judged->fault_reason, sizeof(judged->fault_reason), "%s", why);
	__atomic_store_n(&fts__store_counter, 0, __ATOMIC_RELAXED);
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
void fts__sampler_move_next(void)
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
	/* the health reads too, in the narrowest of their brackets: the offsets between
	 * the clocks (a step, a sleep) are told to within them; a CPU's offset, to within
	 * RAW's own bracket below (health.c) */
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
	int watch = pc->of.proof.state >= PROOF_PENDING && fts__proof_relation() == FTS__CS_FROM_COUNTER;
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
int fts__sampler_sample_locked(const char *why)
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
			if ((rc = fts__calib_init_at(&pc->own[k].c, NULL, NULL, 0)) < 0)
				return rc;
			__atomic_store_n(&pc->hot.hists[k], &pc->own[k].c, __ATOMIC_RELEASE);
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
	fts__proof_skew_update_locked();
	if (!off && s.cpu >= 0 && judged->health.have_last &&
	    judged->health.last.cpu >= 0 && s.cpu != judged->health.last.cpu)
		fts__proof_skew_visit_locked(&e);
	/* The sampler saw the step (or the sleep, which steps the wall clock against a
	 * counter that stopped or ran on): the history is told, and need not guess. A
	 * counter that jumped the history finds itself (calib.c, rule 3). */
	/* Each clock is told of the events that move it against the counter (rule 13). */
	steps = fts__estimate_rule13_moved(e.step, e.tai_step, e.suspend, e.ran_on);
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

/* With lock held: has the kernel left the clocksource it had when the counter was
 * chosen? Then why gets the reason and 1 is returned. */
int fts__sampler_switched_locked(char *why, size_t len)
{
	const struct fts__choice *ch = fts__backend_choice();
	char now[32];

	if (pc_faulted() || !ch->store_counter || !ch->clocksource[0])
		return 0;
	if (pc_clocksource(now, sizeof(now)) < 0 || !strcmp(now, ch->clocksource))
		return 0;
	snprintf(why, len, "the kernel's clocksource changed from %s to %s", ch->clocksource, now);
	return 1;
}

/* With lock held: a sampler round. A warp test that could not run is retried when
 * due; then a sample. The sampler moves to the next CPU between rounds
 * (fts__sampler_move_next). */
int fts__sampler_round_locked(const char *why)
{
	fts__proof_run_locked();
	return fts__sampler_sample_locked(why);
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
		switched = fts__sampler_switched_locked(why, sizeof(why));
		if (fts__now(CLOCK_MONOTONIC, &now) < 0)
			now = due;   /* never fails; were it to, a sample a period */
		if ((moving = src->wait || stepped || switched || now >= due)) {
			fts__sampler_round_locked(switched ? why : NULL);
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
			fts__sampler_move_next();
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
void fts__sampler_probe_resolution_locked(void)
{
	const struct fts__source *src = &pc->hot.src;
	uint64_t ticks;

	if (pc->of.res_probed)
		return;
	pc->of.res_probed = 1;
	pc->of.res_ns = fts__res_probe(src->counter, src->realtime, src->ctx, &ticks);
	__atomic_store_n(&pc->hot.res_ticks, ticks, __ATOMIC_RELAXED);
}

void fts__sampler_resolution_locked(int64_t res_ns, uint64_t res_ticks)
{
	pc->of.res_probed = 1;
	pc->of.res_ns = res_ns;
	__atomic_store_n(&pc->hot.res_ticks, res_ticks, __ATOMIC_RELAXED);
}

/* The first samples' spacing: FIRST_GAP_NS, longer on a coarse clock, never past the
 * sampler's period. */
int64_t fts__sampler_first_gap_ns(void)
{
	int64_t g = pc->of.res_ns * FIRST_GAP_PER_RES;

	return g < FIRST_GAP_NS ? FIRST_GAP_NS : g > SAMPLER_PERIOD_NS ? SAMPLER_PERIOD_NS : g;
}

/* With lock held: make sure the history has three samples and the sampler runs. */
int fts__sampler_start_locked(void)
{
	const struct fts__source *src = &pc->hot.src;
	int rc = 0;

	fts__reset_watch_fork();
	/* No counter: stamps are clock readings, which need no history. */
	if (!FTS__HAVE_COUNTER && src->counter == fts__hw_counter)
		return 0;
	/* Before conversions rely on a counter the kernel does not keep time with: the
	 * warp test (not fatal: new stamps then use the clock until it runs) */
	fts__proof_run_locked();
	fts__sampler_probe_resolution_locked();
	/* Three samples: two intervals, so that each has a neighbour to give the rate. */
	while (fts_calib_count(realtime_hist()) < 3) {
		if (fts_calib_count(realtime_hist())) {
			if (src->sleep) {
				src->sleep(src->ctx, fts__sampler_first_gap_ns());
			} else {
				int64_t now;
				if (fts__now(CLOCK_MONOTONIC, &now) == 0)
					fts__sleep_until(now + fts__sampler_first_gap_ns());
			}
		}
		if ((rc = fts__sampler_sample_locked(NULL)) < 0)
			return rc;
	}
	start_thread_locked();
	return 0;
}
