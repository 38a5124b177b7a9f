/* clock.c - the process clock: its one object and its interface (clock.h).
 *
 * The process clock is a few files, each with one concern and its own header, and
 * dependencies run one way (scripts/depgraph). clock.c is the object's interface: the
 * view conversions use, and what the rest of the library calls (the first
 * calibration, the history files and a trace's history, the tests' seam, the state
 * for fts_get_info, the shared history and faststamp serve). Below it: sampler.c takes
 * the samples (a bracket of each clock) and runs the sampler thread, moving it from CPU
 * to CPU; reset.c is the one reset (a new source, a fork's child); proof.c proves the
 * counter across CPUs and says whether new stamps use it; clockobj.c defines the one
 * object they share (fts__clock_pc, whole in clockobj.h) and its lock. Below those,
 * hwsource.c is the machine's source (the counter and the clocks), health.c judges a
 * sample against the ones before, a pure function, record.c writes the record file
 * of fts_clock_record, and attach.c looks for the machine's shared history, converts
 * with it while it is valid, leaves it, and publishes it for faststamp serve, given
 * what it needs as arguments. Above it, fresh.c (rule 12) keeps a line from a clock
 * read, renewed after each sampler round through the hook it gives
 * (fts__clock_on_round); convert.c (rule 11) and tagged.c (rule 14) convert with what
 * they keep.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
#include "clockobj.h"
#include "attach.h"
#include "freq.h"
#include "now.h"
#include "proof.h"
#include "reset.h"
#include "sampler.h"
#include "sysfs.h"
#include "warp.h"

/* Has the process samples of its own? (Its histories, emptied by a reset, stay.) */
static int own_history(void)
{
	return fts_calib_count(realtime_hist()) > 0;
}

int fts__clock_clocksource(char *out, size_t len)
{
	return pc_clocksource(out, len);
}

int fts__clock_sample(void)
{
	int rc;
	pthread_mutex_lock(&pc->lock);
	rc = fts__sampler_sample_locked(NULL);
	pthread_mutex_unlock(&pc->lock);
	return rc;
}

int fts__clock_round(void)
{
	int rc;
	fts__sampler_move_next();
	pthread_mutex_lock(&pc->lock);
	rc = fts__sampler_round_locked(NULL);
	pthread_mutex_unlock(&pc->lock);
	return rc;
}

int fts__clock_prove(void)
{
	int rc;
	pthread_mutex_lock(&pc->lock);
	rc = fts__proof_run_locked();
	pthread_mutex_unlock(&pc->lock);
	return rc;
}

FTS__PATH(3) int64_t fts__clock_skew_ns(void)
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
	if (fts__sampler_switched_locked(why, sizeof(why)))
		rc = fts__sampler_sample_locked(why);
	pthread_mutex_unlock(&pc->lock);
	return rc == -EIO ? -EIO : 0;
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
	.counter_in_use = counter_in_use, .clock_id = clock_id, .needs_proof = fts__proof_needed,
	.counter = counter_now,
};

/* With lock held, before a history is made: the first call looks for the machine's
 * shared history. 1 while the process uses it. */
static int attach_locked(void)
{
	int was = fts__attach_in_use(&pc->hot.attach);
	int now = fts__attach_locked(&pc->hot.attach, &pc->attach, own_history(), &attach_clock);

	if (now && !was) {
		int64_t res_ns;
		uint64_t res_ticks;

		view_changed();
		/* for the bridge's reads (read_line): the publisher's finding, of the same
		 * clocksource, else a probe of its own */
		if (fts__attach_resolution(&pc->hot.attach, &res_ns, &res_ticks))
			fts__sampler_resolution_locked(res_ns, res_ticks);
		else
			fts__sampler_probe_resolution_locked();
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
		if (!strcmp(ch->arch.backend, fts__histfile_kind_names[k]))
			h->kind = k;
	if (with_hz)
		h->counter_hz = fts__freq(NULL, 0);
	fts__histfile_boot_id(h->boot_id);
	snprintf(h->clocksource, sizeof(h->clocksource), "%s", ch->clocksource);
	fts__now(CLOCK_REALTIME, &h->created_ns);
}

/* fts__clock_prepare's work when the history is not ready: out of the hot section. */
__attribute__((noinline, cold)) static int prepare_slow(uint64_t c1)
{
	int rc;

	pthread_mutex_lock(&pc->lock);
	if (attach_locked()) {
		pthread_mutex_unlock(&pc->lock);
		return 0;
	}
	rc = fts__sampler_start_locked();
	/* Another thread may have sampled while we waited. */
	if (rc == 0 && !pc_running() && fts__calib_newest_counter(realtime_hist()) == c1)
		rc = fts__sampler_sample_locked(NULL);
	pthread_mutex_unlock(&pc->lock);
	/* A failed refresh still leaves an extrapolation, if there is a history. */
	if (rc < 0 && fts_calib_count(fts__clock_history(FTS__CLK_REALTIME)) >= 2)
		rc = 0;
	return rc;
}

FTS__PATH(5) int fts__clock_prepare(uint64_t newest)
{
	const struct fts_calib *h = realtime_hist();
	uint64_t c1 = 0;

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
	return prepare_slow(c1);
}

/* Clock k read through a source that is not the machine's (a test's), between two
 * reads of its counter *b and *a: out of the conversion's path. */
__attribute__((cold, noinline)) static int read_src(const struct fts__source *src, int k,
						   uint64_t *b, int64_t *rt, uint64_t *a)
{
	*b = src_counter();
	if ((k == FTS__CLK_REALTIME ? src->realtime(src->ctx, rt) : src->read(src->ctx, k, rt)) < 0)
		return -1;
	*a = src_counter();
	return 0;
}

/* A clock read now, bracketed by counter reads, as a line at the tail's band: what the
 * clock read at a counter value before it lies within its bound, if the clock kept the
 * band since (the bridge, rule 11). */
FTS__PATH(3) static int read_line(int k, const struct fts__line *tail, struct fts__line *m)
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
	if (read_src(src, k, &b, &rt, &a) < 0)
		return -1;
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

FTS__PATH(1) int fts__clock_epoch(int64_t *e)
{
	const struct fts__source *src = &pc->hot.src;

	return src->epoch && src->epoch(src->ctx, e) == 0 ? 0 : -1;
}

uint64_t fts__clock_counter_now(void)
{
	return pc_faulted() ? 0 : src_counter();
}

FTS__PATH(3) int fts__clock_read(int k, const struct fts__line *fwd, struct fts__line *m)
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
		fts__sampler_sample_locked(NULL);
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
		rc = fts__sampler_start_locked();
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
		rc = fts__histfile_save_clocks(c, fd, &h);
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
			(void)fts__sampler_sample_locked(NULL);
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
		if ((rc = fts__sampler_start_locked()) == 0 && pc_taken() == before)
			rc = fts__sampler_sample_locked(NULL);
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
				fts__sleep_until(now + fts__sampler_first_gap_ns());
		}
		uint64_t before = pc_taken();
		if ((rc = fts__sampler_start_locked()) == 0 && pc_taken() == before)
			rc = fts__sampler_sample_locked(NULL);
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
		fts__sampler_sample_locked(NULL);
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
	fts__reset_locked(FTS__RESET_SOURCE);
	pthread_mutex_unlock(&pc->lock);
}

FTS__HOT int fts__clock_uses_hw(void)
{
	return pc_uses_hw();
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
	fts__proof_reset_once();
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

FTS__PATH(3) const struct fts_calib *fts__clock_history(int k)
{
	if (fts__attach_in_use(&pc->hot.attach))
		return fts__attach_view(&pc->hot.attach, k);
	return pc_hist(k);
}

FTS__PATH(5) void fts__clock_view(int k, struct fts__clock_view *v)
{
	const struct fts__attached *a = &pc->hot.attach;

	v->cur = fts__clock_history(k);
	v->old = v->cur && v->cur == fts__attach_view(a, k) ? NULL : fts__attach_frozen(a, k);
}

FTS__PATH(5) int fts__clock_holds(int k)
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
	int rc = 0;

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
	for (int k = 0; k < FTS__NCLK && rc == 0; k++)
		if ((rc = fts__calib_init_at(&pc->own[k].c, NULL,
					     (char *)region + (size_t)k * fts__shm_stride(len), len)) == 0)
			__atomic_store_n(&pc->hot.hists[k], &pc->own[k].c, __ATOMIC_RELEASE);
	if (rc < 0) {
		snprintf(err, errlen, "%s", strerror(-rc));
		rc = -1;
	} else if ((rc = fts__sampler_start_locked()) < 0) {
		snprintf(err, errlen, "the first samples: %s", strerror(-rc));
	} else if (proof->state == PROOF_WARPED || proof->state == PROOF_NO_RUN) {
		snprintf(err, errlen, "the counter across CPUs: %s", proof->text);
		rc = -1;
	} else {
		cpus = proof->state == PROOF_DONE ? &proof->cpus : NULL;
		rc = fts__attach_serve_show(&pc->attach, cpus, pc_skew_ns(), pc->of.res_ns,
					    __atomic_load_n(&pc->hot.res_ticks, __ATOMIC_RELAXED),
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
