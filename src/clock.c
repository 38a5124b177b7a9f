/* clock.c - the process-wide clock behind fast_timestamp_to_*().
 *
 * One fts_calib history maps the counter to CLOCK_REALTIME. Nothing exists until the
 * first conversion: it takes two samples 2 ms apart. From then on
 *  - a conversion of a stamp more than 2 ms past the newest sample takes a sample
 *    first, so recent stamps are interpolated rather than extrapolated;
 *  - a background thread adds a sample every 100 ms while conversions keep coming, and
 *    exits after 10 s without any (the next conversion starts it again).
 * Sampling is serialised by one mutex; conversions read the history under its
 * sequence count. Converters signal use by setting a flag that is written only when it
 * is clear, so a steady stream of conversions does not keep writing a shared line.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#define FIRST_GAP_NS 2000000          /* between the first two samples */
#define RESAMPLE_NS 2000000           /* past the newest sample, take a new one */
#define SAMPLER_PERIOD_NS 100000000   /* background sampler period */
#define SAMPLER_IDLE_ROUNDS 100       /* 10 s without conversions: the thread exits */
#define SAMPLE_TRIES 5                /* keep the narrowest of this many brackets */

#if FTS__HAVE_COUNTER
int fts__store_counter = 1;
#else
int fts__store_counter = 0;
#endif

fast_timestamp_t fts__clock_stamp(void)
{
	int saved = errno;
	struct timespec ts;
	int64_t ns;

	clock_gettime(CLOCK_REALTIME, &ts);
	errno = saved;
	ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return ((uint64_t)ns & ~FTS_STAMP_CLOCK_TAG) | FTS_STAMP_CLOCK_TAG;
}

/* A tagged stamp holds 63-bit two's complement ns: sign-extend bit 62. */
static int64_t clock_stamp_ns(fast_timestamp_t s)
{
	return (int64_t)(s << 1) >> 1;
}

/* ---- backend choice -------------------------------------------------------------- */

static struct fts__choice choice;
static pthread_once_t choice_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
	const char *env = getenv("FASTSTAMP_BACKEND");

	if (fts__clocksource(choice.clocksource, sizeof(choice.clocksource)) < 0)
		choice.clocksource[0] = '\0';
	fts__arch_probe(&choice.arch, choice.clocksource);
	if (env && *env) {
		snprintf(choice.env, sizeof(choice.env), "%s", env);
		if (!strcmp(env, "generic")) {
			choice.arch.usable = 0;
			snprintf(choice.arch.reason, sizeof(choice.arch.reason),
				 "FASTSTAMP_BACKEND=generic in the environment");
		} else if (FTS__HAVE_COUNTER && !strcmp(env, choice.arch.backend)) {
			choice.arch.usable = 1;
			snprintf(choice.arch.reason, sizeof(choice.arch.reason),
				 "FASTSTAMP_BACKEND=%s in the environment", env);
		} else {
			choice.env_ignored = 1;
		}
	}
	__atomic_store_n(&fts__store_counter, FTS__HAVE_COUNTER && choice.arch.usable,
			 __ATOMIC_RELAXED);
}

const struct fts__choice *fts__backend_choice(void)
{
	pthread_once(&choice_once, choose);
	return &choice;
}

/* Decide before main(), so stores agree with fts_get_info() from the first one. */
__attribute__((constructor)) static void choose_at_load(void)
{
	fts__backend_choice();
}

/* ---- the history and its sampler ------------------------------------------------- */

static uint64_t hw_counter(void *ctx)
{
	(void)ctx;
	return fts__arch_counter() & ~FTS_STAMP_CLOCK_TAG;
}

static int hw_realtime(void *ctx, int64_t *ns)
{
	struct timespec ts;
	(void)ctx;
	if (clock_gettime(CLOCK_REALTIME, &ts))
		return -errno;
	*ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return 0;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static const struct fts__source hw_source = { hw_counter, hw_realtime, NULL, NULL, 0 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* sampling, thread start */
static struct fts__source src = { hw_counter, hw_realtime, NULL, NULL, 0 };
static struct fts_calib *hist;        /* set once under lock; read with acquire */
static uint64_t taken;                /* samples taken */
static int used;                      /* a conversion happened since the last round */
static int running;                   /* the sampler thread exists */

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

/* With lock held. */
static int sample_locked(void)
{
	uint64_t best_b = 0, best_a = 0;
	int64_t best_r = 0;
	int got = 0, rc = -EAGAIN;

	if (!hist) {
		struct fts_calib *c = fts_calib_new();
		if (!c)
			return -ENOMEM;
		__atomic_store_n(&hist, c, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < SAMPLE_TRIES; i++) {
		uint64_t b = src.counter(src.ctx), a;
		int64_t r;
		rc = src.realtime(src.ctx, &r);
		a = src.counter(src.ctx);
		if (rc < 0 || a < b)
			continue;
		if (!got || a - b < best_a - best_b) {
			best_b = b;
			best_a = a;
			best_r = r;
			got = 1;
		}
	}
	if (!got)
		return rc < 0 ? rc : -EAGAIN;
	if (fts_calib_add(hist, best_b, best_r, best_a) < 0)
		return -EAGAIN;
	__atomic_store_n(&taken, taken + 1, __ATOMIC_RELAXED);
	return 0;
}

int fts__clock_sample(void)
{
	int rc;
	pthread_mutex_lock(&lock);
	rc = sample_locked();
	pthread_mutex_unlock(&lock);
	return rc;
}

static void *sampler(void *arg)
{
	int idle = 0;
	(void)arg;
	for (;;) {
		sleep_ns(SAMPLER_PERIOD_NS);
		pthread_mutex_lock(&lock);
		if (__atomic_exchange_n(&used, 0, __ATOMIC_RELAXED))
			idle = 0;
		else
			idle++;
		if (idle >= SAMPLER_IDLE_ROUNDS || src.no_thread) {
			__atomic_store_n(&running, 0, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&lock);
			return NULL;
		}
		sample_locked();
		pthread_mutex_unlock(&lock);
	}
}

/* With lock held: make sure the history has two samples and the sampler runs. */
static int start_locked(void)
{
	int rc = 0;

	pthread_once(&atfork_once, register_atfork);
	if (fts_calib_count(hist) < 2) {
		if ((rc = sample_locked()) < 0)
			return rc;
		if (src.sleep)
			src.sleep(src.ctx, FIRST_GAP_NS);
		else
			sleep_ns(FIRST_GAP_NS);
		if ((rc = sample_locked()) < 0)
			return rc;
	}
	if (!__atomic_load_n(&running, __ATOMIC_RELAXED) && !src.no_thread) {
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

/* Ready the history for converting counter values up to newest: calibrate on first
 * use, take a sample if newest lies well past the newest sample. */
static int prepare(uint64_t newest)
{
	const struct fts_calib *h = __atomic_load_n(&hist, __ATOMIC_ACQUIRE);
	uint64_t c1;
	int64_t r1, ns, err;
	struct fts__seg seg;
	unsigned seq;
	int where, rc = 0;

	note_use();
	if (h && fts_calib_count(h) >= 2 && __atomic_load_n(&running, __ATOMIC_RELAXED)) {
		do {
			seq = fts__calib_read_begin(h);
			where = fts__calib_lookup(h, newest, &seg);
		} while (fts__calib_read_retry(h, seq));
		if (where <= 0)
			return 0;
		/* Past the newest sample: near enough to extrapolate? */
		if (fts__seg_convert(&seg, 1, newest, &ns, &err) == 0 &&
		    fts__calib_newest(h, &c1, &r1) == 0 && ns - r1 <= RESAMPLE_NS)
			return 0;
	}
	pthread_mutex_lock(&lock);
	rc = start_locked();
	if (rc == 0) {
		/* Another thread may have sampled while we waited. */
		if (fts__calib_newest(hist, &c1, &r1) == 0 && newest > c1)
			rc = sample_locked();
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

/* ---- conversions ----------------------------------------------------------------- */

/* Convert stamps[0..n) into ns/err (err may be NULL); the history is prepared. */
static int convert_many(const fast_timestamp_t *stamps, size_t n, int64_t *ns, int64_t *err)
{
	const struct fts_calib *h = fts__clock_history();
	struct fts__seg seg;
	unsigned seq;
	int rc;

	if (!h) {   /* no history yet: only tagged stamps can be converted */
		for (size_t i = 0; i < n; i++) {
			if (!(stamps[i] & FTS_STAMP_CLOCK_TAG))
				return -EAGAIN;
			ns[i] = clock_stamp_ns(stamps[i]);
			if (err)
				err[i] = 0;
		}
		return 0;
	}
retry:
	seq = fts__calib_read_begin(h);
	rc = 0;
	seg.c0 = 1;   /* no interval cached yet: c0 > c1 */
	seg.c1 = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		fast_timestamp_t x = stamps[i];
		int64_t e = 0;
		int where;

		if (x & FTS_STAMP_CLOCK_TAG) {
			ns[i] = clock_stamp_ns(x);
			e = 0;
		} else {
			if (x >= seg.c0 && x <= seg.c1)
				where = 0;
			else if ((where = fts__calib_lookup(h, x, &seg)) == -ENODATA)
				rc = -EAGAIN;
			if (rc == 0)
				rc = fts__seg_convert(&seg, where, x, &ns[i], &e);
			if (where != 0) {  /* do not reuse an outside interval as inside */
				seg.c0 = 1;
				seg.c1 = 0;
			}
		}
		if (err)
			err[i] = e;
	}
	if (fts__calib_read_retry(h, seq))
		goto retry;
	return rc;
}

static int convert_checked(const fast_timestamp_t *stamps, size_t n, int64_t *ns, int64_t *err)
{
	uint64_t newest = 0;
	int have_counter = 0, rc;

	for (size_t i = 0; i < n; i++) {
		if (stamps[i] & FTS_STAMP_CLOCK_TAG)
			continue;
		have_counter = 1;
		if (stamps[i] > newest)
			newest = stamps[i];
	}
	if (have_counter) {
		if (!FTS__HAVE_COUNTER && src.counter == hw_counter)
			return -EINVAL;   /* a counter value on a build without a counter */
		if ((rc = prepare(newest)) < 0)
			return rc;
	}
	return convert_many(stamps, n, ns, err);
}

int fts_convert(const fast_timestamp_t *stamp, int64_t *ns, int64_t *err_ns)
{
	int64_t v, e;
	int rc;

	if (!stamp || !ns) {
		errno = EINVAL;
		return -1;
	}
	if ((rc = convert_checked(stamp, 1, &v, &e)) < 0) {
		errno = -rc;
		return -1;
	}
	*ns = v;
	if (err_ns)
		*err_ns = e;
	return 0;
}

int fts_convert_array(const fast_timestamp_t *stamps, size_t n, int64_t *ns, int64_t *err_ns)
{
	int rc;

	if (n == 0)
		return 0;
	if (!stamps || !ns) {
		errno = EINVAL;
		return -1;
	}
	if ((rc = convert_checked(stamps, n, ns, err_ns)) < 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

int fast_timestamp_to_timespec(const fast_timestamp_t *stamp, struct timespec *ts)
{
	int64_t ns, sec;

	if (!ts) {
		errno = EINVAL;
		return -1;
	}
	if (fts_convert(stamp, &ns, NULL) < 0)
		return -1;
	sec = ns / 1000000000;
	ns %= 1000000000;
	if (ns < 0) {   /* before 1970: keep tv_nsec in [0, 1e9) */
		ns += 1000000000;
		sec--;
	}
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)ns;
	return 0;
}

int fast_timestamp_to_timeval(const fast_timestamp_t *stamp, struct timeval *tv)
{
	struct timespec ts;

	if (!tv) {
		errno = EINVAL;
		return -1;
	}
	if (fast_timestamp_to_timespec(stamp, &ts) < 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
	return 0;
}

int fts_diff_ns(const fast_timestamp_t *earlier, const fast_timestamp_t *later, int64_t *ns)
{
	static int64_t mult;   /* ns per tick << 62, set once (racing setters agree) */
	uint64_t a, b, d;
	__int128 v;

	if (!earlier || !later || !ns) {
		errno = EINVAL;
		return -1;
	}
	a = *earlier;
	b = *later;
	if ((a | b) & FTS_STAMP_CLOCK_TAG || !FTS__HAVE_COUNTER) {
		int64_t x[2];
		fast_timestamp_t s[2] = { a, b };
		if (fts_convert_array(s, 2, x, NULL) < 0)
			return -1;
		v = (__int128)x[1] - x[0];
	} else {
		if (!__atomic_load_n(&mult, __ATOMIC_RELAXED)) {
			uint64_t hz = fts__freq(NULL, 0);
			if (!hz) {
				errno = EAGAIN;
				return -1;
			}
			__atomic_store_n(&mult, (int64_t)(((unsigned __int128)1000000000 << 62) / hz),
					 __ATOMIC_RELAXED);
		}
		d = b >= a ? b - a : a - b;
		v = (__int128)(((unsigned __int128)d * (uint64_t)__atomic_load_n(&mult, __ATOMIC_RELAXED)) >> 62);
		if (b < a)
			v = -v;
	}
	if (v > INT64_MAX || v < INT64_MIN) {
		errno = ERANGE;
		return -1;
	}
	*ns = (int64_t)v;
	return 0;
}

/* ---- the seam for tests ---------------------------------------------------------- */

void fts__clock_set_source(const struct fts__source *s)
{
	pthread_mutex_lock(&lock);
	src = s ? *s : hw_source;
	if (hist)
		fts__calib_reset(hist);
	__atomic_store_n(&taken, 0, __ATOMIC_RELAXED);
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

int fts__clock_sampler_running(void)
{
	return __atomic_load_n(&running, __ATOMIC_RELAXED);
}
