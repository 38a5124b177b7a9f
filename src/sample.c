/* sample.c - feeding the process history: samples, health checks, the sampler thread.
 *
 * A sample is one CLOCK_REALTIME read bracketed by two counter reads (the narrowest of
 * a few tries), followed by CLOCK_MONOTONIC and CLOCK_BOOTTIME reads. Comparing each
 * sample with the previous one tells apart what happened in between:
 *  - a step of the wall clock (settimeofday, a leap second): realtime - monotonic
 *    changes, while NTP slews move both alike;
 *  - a suspend: boottime - monotonic grows; the counter either stopped with monotonic
 *    or kept running with boottime, anything else is a fault;
 *  - a counter fault (jump, reset, rate change after a VM migration): the counter's
 *    rate against monotonic leaves the slew band. New stamps then fall back to
 *    clock_gettime (tagged, exact) and the history stops growing, so every counter
 *    stamp taken before stays convertible with the samples of its time. So does the
 *    kernel leaving the counter as its clocksource (checked every second).
 * The background thread samples every 100 ms and waits on a timerfd armed with
 * TFD_TIMER_CANCEL_ON_SET, which the kernel fires when the wall clock is set (and on
 * resume). The sample it takes right then, with the previous one, shows the step; the
 * thread's measured wake-up latency bounds when the step happened, so a knot just
 * before that window is added (its time derived from monotonic, which did not step):
 * stamps older than the window convert to the time before the step, stamps inside it
 * get a bound covering both sides.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "seg.h"

#define FIRST_GAP_NS 2000000          /* between the first three samples */
#define RESAMPLE_NS 2000000           /* extrapolate at most this far past the newest */
#define SAMPLER_PERIOD_NS 100000000   /* background sampler period */
#define SAMPLER_IDLE_ROUNDS 100       /* 10 s without conversions: the thread exits */
#define SAMPLE_TRIES 5                /* keep the narrowest of this many brackets */
/* CLOCK_MONOTONIC runs at the counter's rate times NTP's correction (at most 500 ppm
 * of frequency plus 500 ppm of adjtime slew): a change of the counter's rate against
 * it beyond this is a fault. */
#define FAULT_PPM 2000
#define FAULT_SLACK_NS 2000           /* read-position noise between the clocks */
/* Steps smaller than this are left to the history's own step handling. */
#define STEP_MIN_NS 1000
#define STEP_WINDOW_MIN_NS 50000      /* the least wake-up latency assumed */
#define STEP_WINDOW_MAX_NS 20000000

struct psample {
	uint64_t b, a;        /* the counter around the realtime read */
	uint64_t m;           /* the counter after the monotonic and boottime reads */
	int64_t rt, mono, boot;
};

static uint64_t hw_counter(void *ctx)
{
	(void)ctx;
	return fts__arch_counter() & ~FTS_STAMP_CLOCK_TAG;
}

static int64_t read_clock(clockid_t id, int *err)
{
	struct timespec ts;
	if (clock_gettime(id, &ts)) {
		*err = -errno;
		return 0;
	}
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int hw_realtime(void *ctx, int64_t *ns)
{
	int err = 0;
	(void)ctx;
	*ns = read_clock(CLOCK_REALTIME, &err);
	return err;
}

static int hw_others(void *ctx, int64_t *mono, int64_t *boot)
{
	int err = 0;
	(void)ctx;
	*mono = read_clock(CLOCK_MONOTONIC, &err);
	*boot = read_clock(CLOCK_BOOTTIME, &err);
	return err;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static const struct fts__source hw_source = { .counter = hw_counter, .realtime = hw_realtime,
					     .others = hw_others };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* all state below */
static struct fts__source src = { .counter = hw_counter, .realtime = hw_realtime,
				  .others = hw_others };
static struct fts_calib *hist;        /* set once; read with acquire */
static uint64_t taken;                /* samples added */
static int used;                      /* a conversion happened since the last round */
static int running;                   /* the sampler thread exists */
static struct psample last;           /* the previous sample */
static int have_last;
static long double ticks_per_ns;      /* counter against monotonic, last interval */
static long double ticks_per_ns_err;  /* its relative uncertainty */
/* A stamp further than this past the newest sample makes its conversion sample first
 * (2 ms of ticks; 0 until the rate is known). Read without the lock. */
static uint64_t resample_ticks;
static int64_t step_window_ns = STEP_WINDOW_MIN_NS;
static uint64_t steps_seen, suspends_seen;
static int faulted;
static char fault_reason[160];

static void after_fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	running = 0;   /* threads do not survive fork */
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

static void fault(const char *fmt, long double v)
{
	faulted = 1;
	snprintf(fault_reason, sizeof(fault_reason), fmt, (double)v);
	__atomic_store_n(&fts__store_counter, 0, __ATOMIC_RELAXED);
}

/* With lock held. The counter was chosen because the kernel kept time with it; if the
 * kernel switched away (its watchdog found the counter unstable), so do new stamps. */
static int watch_locked(void)
{
	const struct fts__choice *ch = fts__backend_choice();
	char now[32];
	int rc;

	if (faulted || !ch->store_counter || !ch->clocksource[0])
		return faulted ? -EIO : 0;
	rc = src.clocksource ? src.clocksource(src.ctx, now, sizeof(now))
			     : fts__clocksource(now, sizeof(now));
	if (rc < 0 || !strcmp(now, ch->clocksource))
		return 0;
	faulted = 1;
	snprintf(fault_reason, sizeof(fault_reason),
		 "the kernel's clocksource changed from %s to %s", ch->clocksource, now);
	__atomic_store_n(&fts__store_counter, 0, __ATOMIC_RELAXED);
	return -EIO;
}

int fts__clock_watch(void)
{
	int rc;
	pthread_mutex_lock(&lock);
	rc = watch_locked();
	pthread_mutex_unlock(&lock);
	return rc;
}

static int take(struct psample *s)
{
	int got = 0, rc = -EAGAIN;

	for (int i = 0; i < SAMPLE_TRIES; i++) {
		uint64_t b = src.counter(src.ctx), a;
		int64_t r;
		rc = src.realtime(src.ctx, &r);
		a = src.counter(src.ctx);
		if (rc < 0 || a < b)
			continue;
		if (!got || a - b < s->a - s->b) {
			s->b = b;
			s->a = a;
			s->rt = r;
			got = 1;
		}
	}
	if (!got)
		return rc < 0 ? rc : -EAGAIN;
	rc = src.others(src.ctx, &s->mono, &s->boot);
	s->m = src.counter(src.ctx);
	return rc;
}

/* Compare s with the previous sample; 0 if it may join the history, else the counter
 * has failed (and new stamps now fall back). *step gets the wall clock's step against
 * the counter since the previous sample, and *step_noise how far that may be off. */
static int check(const struct psample *s, long double *step, long double *step_noise)
{
	long double dmono, dsusp, dc, expect, tol, slack;
	int stopped, ran;

	*step = *step_noise = 0;
	if (!have_last)
		return 0;
	if (s->b < last.a) {
		fault("counter went backwards by %.0f ticks", (long double)(last.a - s->b));
		return -1;
	}
	/* Monotonic was read somewhere between b and m: that much noise in each sample
	 * (microseconds under emulation, tens of ns on hardware). */
	slack = (long double)(s->m - s->b + last.m - last.b);
	dmono = (long double)(s->mono - last.mono);
	dsusp = (long double)((s->boot - s->mono) - (last.boot - last.mono));
	if (dsusp < FAULT_SLACK_NS)
		dsusp = 0;
	dc = (long double)(s->b + (s->a - s->b) / 2) - (long double)(last.b + (last.a - last.b) / 2);
	stopped = ran = 1;
	if (ticks_per_ns > 0) {
		expect = dmono * ticks_per_ns;
		tol = expect * (FAULT_PPM * 1e-6L + ticks_per_ns_err) + ticks_per_ns * FAULT_SLACK_NS +
		      slack;
		stopped = dc >= expect - tol && dc <= expect + tol;
		ran = dsusp > 0 && dc >= expect + dsusp * ticks_per_ns * (1 - FAULT_PPM * 1e-6L) - tol &&
		      dc <= expect + dsusp * ticks_per_ns * (1 + FAULT_PPM * 1e-6L) + tol;
		if (!stopped && !ran) {
			fault("counter left its rate against CLOCK_MONOTONIC by %.0f ppm",
			      (dc - expect) / expect * 1e6L);
			return -1;
		}
	}
	if (dsusp > 0)
		suspends_seen++;
	/* The wall clock moved against monotonic by a step, or by a suspend that the
	 * counter slept through too. */
	*step = (long double)((s->rt - s->mono) - (last.rt - last.mono)) - (ran && !stopped ? dsusp : 0);
	*step_noise = ticks_per_ns > 0 ? slack / ticks_per_ns : 0;
	if (dmono > 1e6L && dc > slack) {   /* rate over at least 1 ms */
		ticks_per_ns = dc / dmono;
		ticks_per_ns_err = slack / (dc - slack);
		__atomic_store_n(&resample_ticks, (uint64_t)(ticks_per_ns * RESAMPLE_NS),
				 __ATOMIC_RELAXED);
	}
	return 0;
}

/* With lock held. signalled: the kernel just said the wall clock was set. */
static int sample_locked(int signalled)
{
	struct psample s;
	long double step, noise;
	int rc;

	if (faulted)
		return -EIO;
	if (!hist) {
		struct fts_calib *c = fts_calib_new();
		if (!c)
			return -ENOMEM;
		__atomic_store_n(&hist, c, __ATOMIC_RELEASE);
	}
	if ((rc = take(&s)) < 0)
		return rc;
	if (check(&s, &step, &noise) < 0)
		return -EIO;
	if (fabsl(step) > STEP_MIN_NS + noise) {
		steps_seen++;
		/* Known to be before the step: the wake-up latency window before now. Its
		 * wall time is monotonic's (which did not step) with the old offset. */
		uint64_t mid = s.b + (s.a - s.b) / 2;
		uint64_t back = (uint64_t)((long double)step_window_ns * ticks_per_ns);
		uint64_t w = (s.m - s.b) + (last.m - last.b) + 64;
		if (signalled && ticks_per_ns > 0 && mid > back + w && mid - back - w > last.a + w)
			fts_calib_add(hist, mid - back - w, s.rt - (int64_t)step - step_window_ns,
				      mid - back + w);
	}
	if (fts_calib_add(hist, s.b, s.rt, s.a) < 0)
		return -EAGAIN;
	last = s;
	have_last = 1;
	__atomic_store_n(&taken, taken + 1, __ATOMIC_RELAXED);
	return 0;
}

int fts__clock_sample(void)
{
	int rc;
	pthread_mutex_lock(&lock);
	rc = sample_locked(0);
	pthread_mutex_unlock(&lock);
	return rc;
}

int fts__clock_on_step(void)
{
	int rc;
	pthread_mutex_lock(&lock);
	rc = sample_locked(1);
	pthread_mutex_unlock(&lock);
	return rc;
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

/* Wait up to ns; 1 if the wall clock was set meanwhile. Re-arms the watch. */
static int step_wait(int *fd, int64_t ns)
{
	struct pollfd p = { .fd = *fd, .events = POLLIN };
	struct timespec t = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
	uint64_t v;

	if (*fd < 0) {
		sleep_ns(ns);
		return 0;
	}
	if (ppoll(&p, 1, &t, NULL) <= 0)
		return 0;
	if (read(*fd, &v, sizeof(v)) < 0 && errno == ECANCELED) {
		close(*fd);
		*fd = step_watch_open();
		return 1;
	}
	return 0;
}

static void *sampler(void *arg)
{
	int idle = 0, fd = -1;
	int64_t late[16] = { 0 };
	unsigned n = 0;
	(void)arg;

	/* Wake-ups on time: the latency measured below bounds the step window. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (!src.wait)
		fd = step_watch_open();
	for (;;) {
		int err = 0, stepped;
		int64_t t0 = read_clock(CLOCK_MONOTONIC, &err), lat;
		stepped = src.wait ? src.wait(src.ctx, SAMPLER_PERIOD_NS) : step_wait(&fd, SAMPLER_PERIOD_NS);
		lat = read_clock(CLOCK_MONOTONIC, &err) - t0 - SAMPLER_PERIOD_NS;
		pthread_mutex_lock(&lock);
		if (!stepped && !err) {
			int64_t worst = 0;
			late[n++ % 16] = lat > 0 ? lat : 0;
			for (int i = 0; i < 16; i++)
				worst = late[i] > worst ? late[i] : worst;
			worst *= 4;
			step_window_ns = worst < STEP_WINDOW_MIN_NS ? STEP_WINDOW_MIN_NS
					 : worst > STEP_WINDOW_MAX_NS ? STEP_WINDOW_MAX_NS : worst;
		}
		if (__atomic_exchange_n(&used, 0, __ATOMIC_RELAXED))
			idle = 0;
		else
			idle++;
		if (idle >= SAMPLER_IDLE_ROUNDS || src.no_thread || faulted) {
			__atomic_store_n(&running, 0, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&lock);
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		if (n % 10 == 0)   /* about every second */
			watch_locked();
		sample_locked(stepped);
		pthread_mutex_unlock(&lock);
	}
}

/* With lock held: make sure the history has three samples and the sampler runs. */
static int start_locked(void)
{
	int rc = 0;

	pthread_once(&atfork_once, register_atfork);
	/* No counter: stamps are clock readings, which need no history. */
	if (!FTS__HAVE_COUNTER && src.counter == hw_counter)
		return 0;
	/* Three samples: two intervals, so that each has a neighbour to give the rate. */
	while (fts_calib_count(hist) < 3) {
		if (fts_calib_count(hist) && src.sleep)
			src.sleep(src.ctx, FIRST_GAP_NS);
		else if (fts_calib_count(hist))
			sleep_ns(FIRST_GAP_NS);
		if ((rc = sample_locked(0)) < 0)
			return rc;
	}
	if (!__atomic_load_n(&running, __ATOMIC_RELAXED) && !src.no_thread && !faulted) {
		pthread_attr_t attr;
		pthread_t t;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		/* Without a thread the history still advances through conversions. */
		if (pthread_create(&t, &attr, sampler, NULL) == 0)
			__atomic_store_n(&running, 1, __ATOMIC_RELAXED);
		pthread_attr_destroy(&attr);
	}
	return 0;
}

static void note_use(void)
{
	if (!__atomic_load_n(&used, __ATOMIC_RELAXED))
		__atomic_store_n(&used, 1, __ATOMIC_RELAXED);
}

int fts__clock_prepare(uint64_t newest)
{
	const struct fts_calib *h = __atomic_load_n(&hist, __ATOMIC_ACQUIRE);
	int rc;

	note_use();
	/* The common case in two loads: inside the history, or near enough past it. */
	if (h && (__atomic_load_n(&running, __ATOMIC_RELAXED) || src.no_thread)) {
		uint64_t c1 = fts__calib_newest_counter(h);
		if (c1 && newest <= c1 + __atomic_load_n(&resample_ticks, __ATOMIC_RELAXED))
			return 0;
	}
	pthread_mutex_lock(&lock);
	rc = start_locked();
	if (rc == 0) {
		/* Another thread may have sampled while we waited. */
		if (newest > fts__calib_newest_counter(hist))
			rc = sample_locked(0);
	}
	pthread_mutex_unlock(&lock);
	/* A failed refresh still leaves an extrapolation, if there is a history. */
	if (rc < 0 && fts_calib_count(fts__clock_history()) >= 2)
		rc = 0;
	return rc;
}

int fts_clock_start(void)
{
	int rc;
	pthread_mutex_lock(&lock);
	rc = start_locked();
	pthread_mutex_unlock(&lock);
	note_use();
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

/* ---- the seam for tests, and state for fts_get_info ------------------------------- */

void fts__clock_set_source(const struct fts__source *s)
{
	pthread_mutex_lock(&lock);
	src = s ? *s : hw_source;
	if (!src.others)
		src.others = hw_others;
	if (hist)
		fts__calib_reset(hist);
	have_last = 0;
	ticks_per_ns = ticks_per_ns_err = 0;
	__atomic_store_n(&resample_ticks, 0, __ATOMIC_RELAXED);
	step_window_ns = STEP_WINDOW_MIN_NS;
	steps_seen = suspends_seen = 0;
	if (faulted) {   /* a new source starts healthy */
		faulted = 0;
		fault_reason[0] = '\0';
		__atomic_store_n(&fts__store_counter, fts__backend_choice()->store_counter,
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&taken, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
}

int fts__clock_uses_hw(void)
{
	return src.counter == hw_counter;
}

void fts__clock_state(struct fts__clock_state *st)
{
	pthread_mutex_lock(&lock);
	st->samples_taken = taken;
	st->running = running;
	st->faulted = faulted;
	snprintf(st->fault, sizeof(st->fault), "%s", fault_reason);
	st->steps = steps_seen;
	st->suspends = suspends_seen;
	st->step_window_ns = step_window_ns;
	pthread_mutex_unlock(&lock);
}

uint64_t fts__clock_samples_taken(void)
{
	return __atomic_load_n(&taken, __ATOMIC_RELAXED);
}

const struct fts_calib *fts__clock_history(void)
{
	return __atomic_load_n(&hist, __ATOMIC_ACQUIRE);
}
