/* guest_stamp.c - the in-guest half of the fault lab (scripts/guest/): stamps every
 * ~5 us between two clock_gettime reads while one real kernel time fault happens,
 * converts every stamp afterwards and checks each error bound against its bracket.
 * The bracketing clock turns stamp by stamp through CLOCK_REALTIME, TAI, MONOTONIC,
 * BOOTTIME and MONOTONIC_RAW, and each stamp is converted to its own bracket's clock
 * (fts_convert_clock), so every clock is judged against reads of itself. CLOCK_TAI is
 * first set 37 s ahead of CLOCK_REALTIME (ADJ_TAI), so that the two differ.
 * Meant to run as root inside a throw-away QEMU guest: it steps, slews and
 * suspends the machine's clock.
 *
 * usage: FASTSTAMP_BACKEND=tsc guest_stamp SCENARIO
 * Prints "FTS-RESULT scenario=... key=value ..." (see scripts/guest/run-scenario) and
 * human-readable detail. Exit 0 when the run happened (whatever its verdict), 2 when it
 * could not (bad scenario, backend not tsc, no memory). Where the warp test could not
 * run, it starts itself afresh (FTS_GUEST_PROOF_TRIES counts the processes).
 *
 * usage: guest_stamp decision
 * The library's choice of backend, as fts_get_info() gives it, with the evidence it
 * rests on: "FTS-DECISION env=... backend=... ..." and "FTS-DECISION-REASON ...".
 * One stamp is then converted and judged against its bracket: with the counter chosen
 * the warp test across CPUs runs there, and its verdict is printed. Changes no clock.
 *
 * The process records its samples from the first (fts_clock_record); every run prints
 * its record in FTS-RECORD lines (base64) and each clock's widest bound in the span
 * (FTS-WIDEST), a run with a miss FTS-MISSREC lines (each miss: clock, stamp, bracket,
 * answer), which scripts/guest/run-scenario keeps and tests/test_replay.c replays. A
 * rate fault's run prints FTS-LAG, the kernel's lag behind the new rate as its stamps
 * show it (print_lag).
 *
 * Times "relative to the fault" are CLOCK_MONOTONIC, read just before each bracket.
 * The span of ambiguity is where CLOCK_REALTIME's bounds widen (over WIDE_NS) around a
 * step or suspend: from the last CLOCK_REALTIME-bracketed stamp before the first wide
 * one to the first after the last wide one. Each clock's widest bound is reported in
 * that span and outside it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include <faststamp.h>

#include "guest.h"

#define PRE_NS (1500 * 1000000LL)   /* stamping before the fault */
#define SPACING_NS 5000             /* between stamps */
#define CONVERT_EVERY_NS 10000000   /* the converter thread's period */
#define WIDE_NS 10000               /* a bound wider than this is "ambiguous" */
#define MAX_RECS (2 << 20)          /* ~10 s of stamps, 64 MiB */
#define SHOW 5                      /* misses printed in detail */
#define CLOCKSOURCE "/sys/devices/system/clocksource/clocksource0/current_clocksource"
#define PROOF_TRIES 3               /* processes that try the warp test, at most */
#define PROOF_TRIES_ENV "FTS_GUEST_PROOF_TRIES"
#define TAI_OFFSET 37               /* TAI - UTC since 2017, so TAI is not REALTIME */
#define NCLK 5
#define RECORD "/fts-record"        /* the run's samples (fts_clock_record), in the guest's RAM */

/* The clocks, in the order the brackets take them; the names prefix FTS-RESULT keys. */
static const struct {
	clockid_t id;
	const char *name;
} clk[NCLK] = {
	{ CLOCK_REALTIME, "rt" }, { CLOCK_TAI, "tai" }, { CLOCK_MONOTONIC, "mono" },
	{ CLOCK_BOOTTIME, "boot" }, { CLOCK_MONOTONIC_RAW, "raw" },
};

struct rec {
	int64_t mono;          /* CLOCK_MONOTONIC just before the bracket */
	int64_t before, after; /* clk[k] around the stamp */
	fast_timestamp_t stamp;
	int k;                 /* the bracket's clock, an index into clk[] */
};

struct fault {
	int64_t mono;          /* CLOCK_MONOTONIC at the fault */
	int ok;                /* the fault verifiably happened */
	char what[256];
};

struct clocks {
	int64_t rt, mono, raw, boot, tai;
};

struct scenario {
	const char *name;
	void (*setup)(const struct scenario *, struct fault *, int64_t fault_at);
	void (*apply)(const struct scenario *, struct fault *);
	void (*verify)(const struct scenario *, struct fault *, const struct clocks *,
		       const struct clocks *, const struct clocks *);
	long arg;
	int64_t post_ns;       /* stamping after the fault */
};

static struct rec *recs;
static size_t nrecs;           /* published with release: recs[0..nrecs) are complete */
static int stop;

/* What the converter thread saw: the newest stamp converted at once. */
static struct {
	uint64_t count, outside, errors;
	int64_t worst;
	size_t idx[SHOW];
	int64_t ns[SHOW], err[SHOW];
} imm;

/* All four clocks at one moment, to within 20 us if the vCPU lets us: the fault checks
 * compare clocks over a second or two, where a preempted read would look like a step. */
static void read_clocks(struct clocks *c)
{
	int64_t best = INT64_MAX;

	for (int i = 0; i < 100 && best > 20000; i++) {
		int64_t m0 = now(CLOCK_MONOTONIC), m1;
		struct clocks t = { .rt = now(CLOCK_REALTIME), .raw = now(CLOCK_MONOTONIC_RAW),
				    .boot = now(CLOCK_BOOTTIME), .tai = now(CLOCK_TAI) };

		m1 = now(CLOCK_MONOTONIC);
		if (m1 - m0 < best) {
			best = m1 - m0;
			t.mono = m0 + best / 2;
			*c = t;
		}
	}
}

static void read_word(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f || !fgets(buf, (int)len, f))
		buf[0] = '\0';
	buf[strcspn(buf, " \n")] = '\0';
	if (f)
		fclose(f);
}

/* How far [ns - err, ns + err] misses what the clock read at the stamp; 0 when it
 * covers it. That reading lies in [before, after], unless a backward step fell between
 * the two reads (before > after): then it is >= before (the step came after the stamp)
 * or <= after (it came before), and only an interval inside the gap misses. */
static int64_t miss(const struct rec *r, int64_t ns, int64_t err)
{
	int64_t lo = ns - err, hi = ns + err;

	if (r->before <= r->after)
		return hi < r->before ? r->before - hi : lo > r->after ? lo - r->after : 0;
	if (hi >= r->before || lo <= r->after)
		return 0;
	return lo - r->after < r->before - hi ? lo - r->after : r->before - hi;
}

static void *stamper(void *arg)
{
	int64_t next = 0;
	size_t n = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED) && n < MAX_RECS) {
		struct rec *r = &recs[n];
		int64_t m;

		while ((m = now(CLOCK_MONOTONIC)) < next)
			;
		r->mono = m;
		r->k = (int)(n % NCLK);
		r->before = now(clk[r->k].id);
		store_fast_timestamp(&r->stamp);
		r->after = now(clk[r->k].id);
		__atomic_store_n(&nrecs, ++n, __ATOMIC_RELEASE);
		next = m + SPACING_NS;
	}
	return NULL;
}

/* As an application would: now and then, convert the newest stamp at once. */
static void *converter(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		size_t n;
		int64_t ns, err, m;

		sleep_until(now(CLOCK_MONOTONIC) + CONVERT_EVERY_NS);
		n = __atomic_load_n(&nrecs, __ATOMIC_ACQUIRE);
		if (!n)
			continue;
		imm.count++;
		if (fts_convert_clock(&recs[n - 1].stamp, clk[recs[n - 1].k].id, &ns, &err) < 0) {
			imm.errors++;
			continue;
		}
		if ((m = miss(&recs[n - 1], ns, err)) == 0)
			continue;
		if (imm.outside < SHOW) {
			imm.idx[imm.outside] = n - 1;
			imm.ns[imm.outside] = ns;
			imm.err[imm.outside] = err;
		}
		imm.outside++;
		if (m > imm.worst)
			imm.worst = m;
	}
	return NULL;
}

/* ---- the faults ------------------------------------------------------------------ */

static void fault_none(const struct scenario *sc, struct fault *f)
{
	(void)sc;
	f->mono = now(CLOCK_MONOTONIC);
	f->ok = 1;
	snprintf(f->what, sizeof(f->what), "no fault");
}

static void fault_settime(const struct scenario *sc, struct fault *f)
{
	int64_t t;
	struct timespec ts;

	f->mono = now(CLOCK_MONOTONIC);
	t = now(CLOCK_REALTIME) + sc->arg * SEC;
	ts = (struct timespec){ .tv_sec = t / SEC, .tv_nsec = t % SEC };
	f->ok = clock_settime(CLOCK_REALTIME, &ts) == 0;
	snprintf(f->what, sizeof(f->what), "clock_settime(CLOCK_REALTIME) %+ld s: %s", sc->arg,
		 f->ok ? "done" : strerror(errno));
}

/* Set the clock so that UTC midnight comes at fault_at, and ask the kernel to insert a
 * leap second there (it needs the clock synchronised: STA_PLL without STA_UNSYNC, and a
 * small maxerror so that it does not declare the clock unsynchronised again). Done
 * before calibration, so only the leap itself falls inside the run. */
static void leap_setup(const struct scenario *sc, struct fault *f, int64_t fault_at)
{
	struct timex tx = { .modes = ADJ_STATUS | ADJ_MAXERROR | ADJ_ESTERROR,
			    .status = STA_PLL | STA_INS, .maxerror = 1000, .esterror = 100 };
	int64_t midnight = (now(CLOCK_REALTIME) / SEC / 86400 + 1) * 86400 * SEC, t;
	struct timespec ts;
	int rc;

	(void)sc;
	f->mono = fault_at;
	t = midnight - (fault_at - now(CLOCK_MONOTONIC));
	ts = (struct timespec){ .tv_sec = t / SEC, .tv_nsec = t % SEC };
	if (clock_settime(CLOCK_REALTIME, &ts) < 0 || (rc = adjtimex(&tx)) < 0)
		snprintf(f->what, sizeof(f->what), "leap second set-up failed: %s", strerror(errno));
	else
		snprintf(f->what, sizeof(f->what),
			 "leap second armed for midnight UTC (%lld s), adjtimex state %d",
			 (long long)(midnight / SEC), rc);
}

static void fault_leap(const struct scenario *sc, struct fault *f)
{
	(void)sc;
	(void)f;   /* the kernel does it, at f->mono */
}

static void fault_freq(const struct scenario *sc, struct fault *f)
{
	struct timex tx = { .modes = ADJ_FREQUENCY, .freq = sc->arg * 65536 };

	f->mono = now(CLOCK_MONOTONIC);
	f->ok = adjtimex(&tx) >= 0;
	snprintf(f->what, sizeof(f->what), "adjtimex ADJ_FREQUENCY %+ld ppm: %s", sc->arg,
		 f->ok ? "done" : strerror(errno));
}

static void fault_tick(const struct scenario *sc, struct fault *f)
{
	long nominal = 1000000 / sysconf(_SC_CLK_TCK);
	struct timex tx = { .modes = ADJ_TICK, .tick = nominal + nominal * sc->arg / 1000000 };

	f->mono = now(CLOCK_MONOTONIC);
	f->ok = adjtimex(&tx) >= 0;
	snprintf(f->what, sizeof(f->what), "adjtimex ADJ_TICK %ld -> %ld us (%+ld ppm): %s",
		 nominal, tx.tick, sc->arg, f->ok ? "done" : strerror(errno));
}

/* Through the other clocksources and back to the one the guest keeps time with, a
 * second apart: from tsc, hpet acpi_pm tsc; from acpi_pm, hpet tsc acpi_pm. */
static void fault_clocksource(const struct scenario *sc, struct fault *f)
{
	static const char *const all[] = { "hpet", "acpi_pm", "tsc" };
	const char *to[3];
	char home[32];
	size_t used = 0, k = 0;

	(void)sc;
	read_word(CLOCKSOURCE, home, sizeof(home));
	for (size_t i = 0; i < 3; i++)
		if (strcmp(all[i], home))
			to[k++] = all[i];
	if (k == 3) {   /* not one of the three: the guest's kind is unknown here */
		f->mono = now(CLOCK_MONOTONIC);
		snprintf(f->what, sizeof(f->what), "clocksource switches: started on %s, not "
			 "hpet, acpi_pm or tsc", home);
		return;
	}
	to[2] = home;
	f->ok = 1;
	used += snprintf(f->what, sizeof(f->what), "clocksource switches from %s (a second apart):",
			 home);
	for (int i = 0; i < 3; i++) {
		char cur[32];
		int rc;

		if (i == 0)
			f->mono = now(CLOCK_MONOTONIC);
		else
			sleep_until(f->mono + i * SEC);
		rc = write_kernel_file(CLOCKSOURCE, to[i], 0);
		read_word(CLOCKSOURCE, cur, sizeof(cur));
		if (rc < 0 || strcmp(cur, to[i]))
			f->ok = 0;
		used += snprintf(f->what + used, sizeof(f->what) - used, " %s:%s", to[i],
				 rc < 0 ? strerror(-rc) : strcmp(cur, to[i]) ? cur : "ok");
		if (used >= sizeof(f->what))
			break;
	}
}

static void fault_suspend(const struct scenario *sc, struct fault *f)
{
	int rc;

	(void)sc;
	write_kernel_file("/sys/class/rtc/rtc0/wakealarm", "0", 0);   /* clear any earlier alarm */
	rc = write_kernel_file("/sys/class/rtc/rtc0/wakealarm", "+3", 0);
	f->mono = now(CLOCK_MONOTONIC);
	if (rc == 0)
		rc = write_kernel_file("/sys/power/state", "mem", 0);
	f->ok = rc == 0;
	snprintf(f->what, sizeof(f->what), "S3 suspend, RTC wake-up after 3 s: %s",
		 rc ? strerror(-rc) : "resumed");
}

/* The host watches the console for this line and pauses the VM (monitor stop, cont). */
static void fault_pause(const struct scenario *sc, struct fault *f)
{
	(void)sc;
	f->mono = now(CLOCK_MONOTONIC);
	printf("FTS-PAUSE-NOW\n");
	fflush(stdout);
	f->ok = 1;
	snprintf(f->what, sizeof(f->what), "asked the host to pause the VM for 2 s");
}

/* ---- checking that the fault took effect ------------------------------------------ */

static int64_t rt_mono_change(const struct clocks *a, const struct clocks *b)
{
	return (b->rt - b->mono) - (a->rt - a->mono);
}

/* Rate of CLOCK_MONOTONIC (slewed like CLOCK_REALTIME, never stepped) against
 * CLOCK_MONOTONIC_RAW, in ppm. */
static double rate_ppm(const struct clocks *a, const struct clocks *b)
{
	return b->raw > a->raw ? ((double)(b->mono - a->mono) / (double)(b->raw - a->raw) - 1) * 1e6
			       : 0;
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

static void verify_step(const struct scenario *sc, struct fault *f, const struct clocks *s,
			const struct clocks *x, const struct clocks *e)
{
	int64_t d = rt_mono_change(s, e), want = sc->arg * SEC;
	/* TAI moves with a set of the wall clock; at a leap second the kernel raises its
	 * TAI offset as it sets REALTIME back, and TAI runs on. */
	int64_t dtai = (e->tai - e->mono) - (s->tai - s->mono), want_tai = sc->setup ? 0 : want;
	struct timex tx = { .modes = 0 };
	int state = adjtimex(&tx);
	size_t used = strlen(f->what);

	(void)x;
	if (sc->setup)   /* the leap: the kernel must have been through it */
		f->ok = state == TIME_WAIT && tx.tai == TAI_OFFSET + 1;
	else if (!f->ok)
		return;
	if (abs64(d - want) > 10000000 || abs64(dtai - want_tai) > 10000000)
		f->ok = 0;
	snprintf(f->what + used, sizeof(f->what) - used,
		 "; realtime - monotonic changed by %+.6f s, tai - monotonic by %+.6f s, adjtimex "
		 "state now %d, TAI offset %d s", (double)d / 1e9, (double)dtai / 1e9, state, tx.tai);
}

static void verify_rate(const struct scenario *sc, struct fault *f, const struct clocks *s,
			const struct clocks *x, const struct clocks *e)
{
	double before = rate_ppm(s, x), after = rate_ppm(x, e);
	size_t used = strlen(f->what);

	/* The kernel steers its multiplier to the new rate within a few ticks. */
	if (fabs(after - before - (double)sc->arg) > 0.1 * (double)labs(sc->arg) + 5)
		f->ok = 0;
	snprintf(f->what + used, sizeof(f->what) - used,
		 "; monotonic against raw: %+.1f ppm before, %+.1f ppm after", before, after);
}

static void verify_suspend(const struct scenario *sc, struct fault *f, const struct clocks *s,
			   const struct clocks *x, const struct clocks *e)
{
	int64_t slept = (e->boot - e->mono) - (s->boot - s->mono);
	size_t used = strlen(f->what);

	(void)sc;
	(void)x;
	if (slept < SEC)
		f->ok = 0;
	snprintf(f->what + used, sizeof(f->what) - used, "; slept %.3f s (boottime - monotonic)",
		 (double)slept / 1e9);
}

static void verify_none(const struct scenario *sc, struct fault *f, const struct clocks *s,
			const struct clocks *x, const struct clocks *e)
{
	size_t used = strlen(f->what);

	(void)sc;
	(void)x;
	snprintf(f->what + used, sizeof(f->what) - used,
		 "; realtime - monotonic changed by %+" PRId64 " ns, boottime - monotonic by %+"
		 PRId64 " ns (reads within 20 us)",
		 rt_mono_change(s, e), (e->boot - e->mono) - (s->boot - s->mono));
}

static const struct scenario scenarios[] = {
	{ "none", NULL, fault_none, verify_none, 0, 2 * SEC },
	{ "settime-plus", NULL, fault_settime, verify_step, 1, 2 * SEC },
	{ "settime-minus", NULL, fault_settime, verify_step, -1, 2 * SEC },
	{ "leap", leap_setup, fault_leap, verify_step, -1, 2 * SEC },
	{ "slew-plus", NULL, fault_freq, verify_rate, 500, 2 * SEC },
	{ "slew-minus", NULL, fault_freq, verify_rate, -500, 2 * SEC },
	{ "tick-small-plus", NULL, fault_tick, verify_rate, 1000, 2 * SEC },
	{ "tick-small-minus", NULL, fault_tick, verify_rate, -1000, 2 * SEC },
	{ "tick-plus", NULL, fault_tick, verify_rate, 10000, 2 * SEC },
	{ "clocksource", NULL, fault_clocksource, verify_none, 0, 3 * SEC },
	{ "suspend", NULL, fault_suspend, verify_suspend, 0, 2 * SEC },
	{ "pause", NULL, fault_pause, verify_none, 0, 2500 * 1000000LL },
};

/* ---- the verdict ------------------------------------------------------------------ */

static double rel_us(const struct rec *r, const struct fault *f)
{
	return (double)(r->mono - f->mono) / 1e3;
}

static void show(const char *tag, size_t i, int64_t ns, int64_t err, const struct fault *f)
{
	const struct rec *r = &recs[i];

	if (r->before <= r->after)
		printf("  %s #%zu %s t=%+.3f us: est-truth=%+" PRId64 " ns (truth = bracket mid +- %"
		       PRId64 " ns) err=%" PRId64 " ns miss=%" PRId64 " ns\n", tag, i, clk[r->k].name,
		       rel_us(r, f),
		       ns - (r->before + (r->after - r->before) / 2), (r->after - r->before) / 2,
		       err, miss(r, ns, err));
	else
		printf("  %s #%zu %s t=%+.3f us: straddling a backward step: est-before=%+" PRId64
		       " ns est-after=%+" PRId64 " ns err=%" PRId64 " ns miss=%" PRId64 " ns\n", tag, i,
		       clk[r->k].name,
		       rel_us(r, f), ns - r->before, ns - r->after, err, miss(r, ns, err));
}

/* One stamp as a line of TAG: its clock, the stamp, its bracket, the answer after the
 * run and one taken again now that the record is closed. */
static void print_stamp(const char *tag, size_t i, const int64_t *est, const int64_t *err,
			const struct fault *f)
{
	int64_t ns2 = 0, err2 = -1;

	fts_convert_clock(&recs[i].stamp, clk[recs[i].k].id, &ns2, &err2);
	printf("%s i=%zu clock=%s stamp=%" PRIu64 " before=%" PRId64 " after=%" PRId64 " ns=%"
	       PRId64 " err=%" PRId64 " again_ns=%" PRId64 " again_err=%" PRId64 " t_us=%.3f\n",
	       tag, i, clk[recs[i].k].name, (uint64_t)recs[i].stamp, recs[i].before,
	       recs[i].after, est[i], err[i], ns2, err2, rel_us(&recs[i], f));
}

/* The run's evidence: each miss as a line of FTS-MISSREC, then the record, base64, in
 * lines of FTS-RECORD (scripts/guest/run-scenario decodes them into a file beside the
 * console log). test_replay replays such runs, kept in tests/data/guest. */
static void dump_evidence(const int64_t *est, const int64_t *err, size_t n,
			  const struct fault *f)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char in[96];
	char line[130];
	size_t shown = 0, total = 0;
	ssize_t got;
	int fd;

	for (size_t i = 0; i < n && shown < 256; i++)
		if (err[i] >= 0 && miss(&recs[i], est[i], err[i])) {
			shown++;
			print_stamp("FTS-MISSREC", i, est, err, f);
		}
	if ((fd = open(RECORD, O_RDONLY)) < 0) {
		printf("FTS-RECORD-END error=%s\n", strerror(errno));
		return;
	}
	while ((got = read(fd, in, sizeof(in))) > 0) {
		size_t o = 0;

		for (ssize_t j = 0; j < got; j += 3) {
			uint32_t v = (uint32_t)in[j] << 16 | (j + 1 < got ? (uint32_t)in[j + 1] << 8 : 0) |
				     (j + 2 < got ? in[j + 2] : 0);

			line[o++] = b64[v >> 18 & 63];
			line[o++] = b64[v >> 12 & 63];
			line[o++] = j + 1 < got ? b64[v >> 6 & 63] : '=';
			line[o++] = j + 2 < got ? b64[v & 63] : '=';
		}
		line[o] = '\0';
		printf("FTS-RECORD %s\n", line);
		total += (size_t)got;
	}
	close(fd);
	printf("FTS-RECORD-END bytes=%zu\n", total);
}

/* The errors fts_convert() documents, by name. */
static const char *errno_name(int e)
{
	return e == 0 ? "-" : e == EAGAIN ? "EAGAIN" : e == ERANGE ? "ERANGE" : e == EINVAL ? "EINVAL"
	       : "other";
}

/* The decision, for run-scenario to judge against what the guest's kind should give:
 * flags as fts_get_info() has them (CPUID's invariant_tsc, Linux's constant_tsc and
 * nonstop_tsc), comma-separated so that every field is one word. */
static int decision(void)
{
	struct fts_info info = { .size = sizeof(info) };
	struct rec r;
	int64_t ns = 0, err = -1, m = -1, again_ms = 0;
	int e = 0, again = -1;
	char flags[sizeof(info.cpu_flags)], chosen[sizeof(info.backend)];

	if (fts_get_info(&info) < 0) {
		printf("FTS-DECISION error=fts_get_info-errno-%d\n", errno);
		return 2;
	}
	snprintf(chosen, sizeof(chosen), "%s", info.backend);
	snprintf(flags, sizeof(flags), "%s", info.cpu_flags[0] ? info.cpu_flags : "-");
	for (char *c = flags; *c; c++)
		if (*c == ' ')
			*c = ',';
	/* One stamp converted: the first calibration, and with it the warp test. */
	r.mono = now(CLOCK_MONOTONIC);
	r.k = 0;
	r.before = now(CLOCK_REALTIME);
	store_fast_timestamp(&r.stamp);
	r.after = now(CLOCK_REALTIME);
	if (fts_convert(&r.stamp, &ns, &err) == 0)
		m = miss(&r, ns, err);
	else
		e = errno;
	fts_get_info(&info);
	/* A counter stamp taken before a warp test that could not run waits for the test,
	 * which the library says it retries after 1 s: past that, convert it again. */
	if (e == EAGAIN && info.cpu_skew_ns == -1) {
		int64_t t0 = now(CLOCK_MONOTONIC);

		sleep_until(t0 + 1500000000);
		again = fts_convert(&r.stamp, &ns, &err) == 0 ? 0 : errno;
		if (again == 0)
			m = miss(&r, ns, err);
		again_ms = (now(CLOCK_MONOTONIC) - t0) / 1000000;
		fts_get_info(&info);
	}
	/* backend: the decision, before any calibration; after_proof: new stamps once the
	 * warp test has run or failed to (cpu_skew_ns -1); stamp_*: the one stamp converted
	 * (miss -1: not converted, stamp_errno says why; stamp_again: converted again
	 * again_ms later, "-" when not tried). */
	printf("FTS-DECISION env=%s backend=%s after_proof=%s clocksource=%s cpu_flags=%s"
	       " counter_hz=%" PRIu64 " stamp_err_ns=%" PRId64 " stamp_miss_ns=%" PRId64
	       " stamp_errno=%s stamp_again=%s again_ms=%" PRId64 " cpu_skew_ns=%" PRId64 "\n",
	       info.env_backend[0] ? info.env_backend : "-", chosen, info.backend,
	       info.clocksource[0] ? info.clocksource : "-", flags, info.counter_hz, err, m,
	       errno_name(e), again < 0 ? "-" : again ? errno_name(again) : "ok", again_ms,
	       info.cpu_skew_ns);
	printf("FTS-DECISION-REASON %s\n", info.reason);
	printf("FTS-DECISION-PROOF %s\n", info.proof[0] ? info.proof : "-");
	return 0;
}

/* P3's lag, measured: the kernel reckons a new rate from a clock read and publishes it
 * later; the readings between lie off the new line traced back to where it meets the
 * old one (below a faster new line, above a slower one). The old line runs through the
 * narrowest CLOCK_MONOTONIC bracket of each half of the 100 ms before the fault, the
 * new one likewise through 20-120 ms after it. Prints how far off the new line a
 * reading after the lines meet lies at most (dev_ns; the widening rule 5 must give),
 * the lag that is over the change of rate (lag_us), and where it is (at_us, from the
 * fault). */
static void print_lag(const struct fault *f, size_t n)
{
	static const int64_t win[4][2] = { { -100, -55 }, { -45, -5 }, { 20, 65 }, { 75, 120 } };
	double x[4], y[4], so, sn, xu, dev = 0, at = 0;

	for (int w = 0; w < 4; w++) {
		int64_t best = INT64_MAX;
		for (size_t i = 0; i < n; i++) {
			const struct rec *r = &recs[i];
			int64_t t = r->mono - f->mono;
			if (r->k != 2 || (r->stamp & FTS_STAMP_CLOCK_TAG) || t < win[w][0] * 1000000 ||
			    t > win[w][1] * 1000000 || r->after - r->before >= best)
				continue;
			best = r->after - r->before;
			x[w] = (double)r->stamp;
			y[w] = (double)(r->before + r->after) / 2;
		}
		if (best == INT64_MAX) {
			printf("FTS-LAG none: no MONOTONIC stamp in window %d\n", w);
			return;
		}
	}
	so = (y[1] - y[0]) / (x[1] - x[0]);
	sn = (y[3] - y[2]) / (x[3] - x[2]);
	xu = (y[2] - y[0] - sn * x[2] + so * x[0]) / (so - sn);
	for (size_t i = 0; i < n; i++) {
		const struct rec *r = &recs[i];
		double sx = (double)r->stamp, d;
		if (r->k != 2 || (r->stamp & FTS_STAMP_CLOCK_TAG) || sx <= xu || sx >= x[2])
			continue;
		d = y[2] + sn * (sx - x[2]);   /* the new line: a slower one lies below the old */
		d = sn > so ? d - (double)r->after : (double)r->before - d;
		if (d > dev) {
			dev = d;
			at = (double)(r->mono - f->mono) / 1e3;
		}
	}
	printf("FTS-LAG dev_ns=%.0f lag_us=%.1f at_us=%.1f rate_ppm=%.0f\n", dev,
	       dev * so / fabs(sn - so) / 1e3, at, (sn / so - 1) * 1e6);
}

int main(int argc, char **argv)
{
	const struct scenario *sc = NULL;
	struct fts_info info = { .size = sizeof(info) };
	struct fault f = { 0 };
	struct clocks cs, cx, ce;
	pthread_t st, ct;
	char backend_start[16], proof_start[sizeof(info.proof)];
	int tries;
	struct timex tx = { .modes = ADJ_TAI, .constant = TAI_OFFSET };
	int64_t start, conv_ns, worst = 0, max_err = 0, max_gap = 0, fault_gap = 0;
	int64_t span_lo = 0, span_hi = 0;
	uint64_t outside = 0, straddling = 0, tagged = 0, errors = 0, wide = 0;
	size_t n, first_wide = 0, last_wide = 0, first_tagged = 0, prev_miss = 0, runs = 0, gap_at = 0, long_gaps = 0;
	int64_t *est, *err;
	/* Each clock's verdict: its stamps (those it bracketed), misses, failed conversions,
	 * and its widest bound in the span of ambiguity (-1: no stamp there) and outside. */
	struct {
		uint64_t stamps, outside, errors, span_stamps;
		int64_t worst, span_err, out_err;
		size_t span_at;
	} cv[NCLK] = { 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "decision"))
		return decision();
	for (size_t i = 0; argc == 2 && i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(argv[1], scenarios[i].name))
			sc = &scenarios[i];
	/* It steps and slews the clock: only ever inside the lab's guest. */
	if (!kernel_cmdline_has("fts.scenario=")) {
		fprintf(stderr, "guest_stamp: not in the lab's guest (no fts.scenario= on the "
			"kernel command line); it would change this machine's clock\n");
		return 2;
	}
	if (!sc) {
		fprintf(stderr, "usage: guest_stamp SCENARIO (");
		for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
			fprintf(stderr, "%s%s", i ? " " : "", scenarios[i].name);
		fprintf(stderr, " | decision)\n");
		return 2;
	}

	/* CLOCK_TAI apart from CLOCK_REALTIME, before the library reads either. */
	if (adjtimex(&tx) < 0) {
		printf("FTS-RESULT scenario=%s error=adjtimex-ADJ_TAI-errno-%d\n", sc->name, errno);
		return 2;
	}

	/* The lab tests the counter path, which the library would not choose by itself in
	 * its guests: under TCG the TSC is not invariant unless QEMU is told to say it is,
	 * and the guest that says so keeps time with acpi_pm or hpet. */
	if (fts_get_info(&info) < 0 || strcmp(info.backend, "tsc")) {
		printf("FTS-RESULT scenario=%s error=backend-not-tsc backend=%s\n", sc->name,
		       info.backend);
		printf("FTS-INFO reason=%s (run with FASTSTAMP_BACKEND=tsc)\n", info.reason);
		return 2;
	}
	snprintf(backend_start, sizeof(backend_start), "%s", info.backend);
	recs = malloc(MAX_RECS * sizeof(*recs));
	est = malloc(MAX_RECS * sizeof(*est));
	err = malloc(MAX_RECS * sizeof(*err));
	if (!recs || !est || !err) {
		printf("FTS-RESULT scenario=%s error=no-memory\n", sc->name);
		return 2;
	}
	/* Touch every page now, not while stamping. */
	memset(recs, 0, MAX_RECS * sizeof(*recs));
	memset(est, 0, MAX_RECS * sizeof(*est));
	memset(err, 0, MAX_RECS * sizeof(*err));

	start = now(CLOCK_MONOTONIC);
	if (sc->setup)
		sc->setup(sc, &f, start + PRE_NS);
	/* Calibrated at once, every sample of the process clock kept in a record from the
	 * first: every run prints it (dump_evidence), so that the test suite can
	 * replay the history this process had. A process started afresh below records
	 * anew. */
	unlink(RECORD);
	if (fts_clock_record(RECORD) < 0) {
		printf("FTS-RESULT scenario=%s error=fts_clock_record-errno-%d\n", sc->name, errno);
		return 2;
	}
	/* A counter the kernel does not keep time with is used once the warp test has run
	 * at the first calibration. On a loaded host the two vCPUs may not run together
	 * long enough for it (cpu_skew_ns -1), and the library does not try again while
	 * its sampler runs: every stamp would be a clock reading and the run would test
	 * nothing of the counter. A fresh process tries again, before the fault is due. */
	fts_get_info(&info);
	tries = getenv(PROOF_TRIES_ENV) ? atoi(getenv(PROOF_TRIES_ENV)) : 1;
	if (info.cpu_skew_ns == -1 && tries < PROOF_TRIES &&
	    now(CLOCK_MONOTONIC) < start + PRE_NS - 300000000) {
		char next[16];

		printf("FTS-PROOF try %d of %d: %s; a fresh process tries again\n", tries,
		       PROOF_TRIES, info.proof);
		snprintf(next, sizeof(next), "%d", tries + 1);
		setenv(PROOF_TRIES_ENV, next, 1);
		execv("/proc/self/exe", argv);
		printf("FTS-PROOF execv: %s\n", strerror(errno));
	}
	snprintf(proof_start, sizeof(proof_start), "%s", info.proof);
	read_clocks(&cs);
	pthread_create(&st, NULL, stamper, NULL);
	pthread_create(&ct, NULL, converter, NULL);
	sleep_until(start + PRE_NS);
	sc->apply(sc, &f);
	read_clocks(&cx);
	sleep_until(f.mono + sc->post_ns > cx.mono ? f.mono + sc->post_ns : cx.mono + sc->post_ns);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(st, NULL);
	pthread_join(ct, NULL);
	read_clocks(&ce);
	sc->verify(sc, &f, &cs, &cx, &ce);
	if (sc->apply == fault_tick || sc->apply == fault_freq)
		print_lag(&f, nrecs);
	n = nrecs;

	/* Every stamp, converted after the run as a log reader would, to its bracket's
	 * clock. */
	conv_ns = now(CLOCK_MONOTONIC);
	for (size_t i = 0; i < n; i++)
		if (fts_convert_clock(&recs[i].stamp, clk[recs[i].k].id, &est[i], &err[i]) < 0) {
			err[i] = -1;
			cv[recs[i].k].errors++;
			if (errors++ == 0)
				printf("  conversion #%zu (%s) failed: %s\n", i, clk[recs[i].k].name,
				       strerror(errno));
		}
	conv_ns = now(CLOCK_MONOTONIC) - conv_ns;
	fts_get_info(&info);
	if (fts_clock_record(NULL) < 0)
		printf("  the record could not be closed: %s\n", strerror(errno));

	/* The span of ambiguity, from CLOCK_REALTIME's wide bounds, widened to the
	 * CLOCK_REALTIME stamps on either side that are not wide. */
	for (size_t i = 0; i < n; i++) {
		if (recs[i].k != 0 || err[i] <= WIDE_NS)
			continue;
		if (!wide++)
			first_wide = i;
		last_wide = i;
	}
	if (wide) {
		span_lo = span_hi = recs[first_wide].mono;
		for (size_t i = first_wide; i-- > 0;)
			if (recs[i].k == 0) {
				span_lo = recs[i].mono;
				break;
			}
		span_hi = recs[n - 1].mono + 1;
		for (size_t i = last_wide + 1; i < n; i++)
			if (recs[i].k == 0) {
				span_hi = recs[i].mono;
				break;
			}
	}
	for (int k = 0; k < NCLK; k++)
		cv[k].span_err = -1;

	printf("FTS-FAULT scenario=%s ok=%d at=%+.3f ms after start: %s\n", sc->name, f.ok,
	       (double)(f.mono - start) / 1e6, f.what);
	printf("stamps: %zu over %.3f s (one per %.2f us)%s, converted in %.3f s\n", n,
	       n ? (double)(recs[n - 1].mono - recs[0].mono) / 1e9 : 0.0,
	       n > 1 ? (double)(recs[n - 1].mono - recs[0].mono) / 1e3 / (double)(n - 1) : 0.0,
	       n == MAX_RECS ? " (array full: stamping stopped early)" : "",
	       (double)conv_ns / 1e9);
	printf("misses (t relative to the fault; est-truth against the bracket's middle):\n");
	for (size_t i = 0; i < n; i++) {
		int64_t m, gap = i ? recs[i].mono - recs[i - 1].mono : 0;
		int k = recs[i].k, in_span = wide && recs[i].mono > span_lo && recs[i].mono < span_hi;

		if (gap > max_gap) {
			max_gap = gap;
			gap_at = i;
		}
		long_gaps += gap > 1000000;
		if (i && recs[i - 1].mono < f.mono && recs[i].mono >= f.mono)
			fault_gap = gap;
		if ((recs[i].stamp & FTS_STAMP_CLOCK_TAG) && !tagged++)
			first_tagged = i;
		if (recs[i].before > recs[i].after)
			straddling++;
		cv[k].stamps++;
		if (err[i] < 0)
			continue;
		if (err[i] > max_err)
			max_err = err[i];
		if (in_span) {
			cv[k].span_stamps++;
			if (err[i] > cv[k].span_err) {
				cv[k].span_err = err[i];
				cv[k].span_at = i;
			}
		} else if (err[i] > cv[k].out_err) {
			cv[k].out_err = err[i];
		}
		if ((m = miss(&recs[i], est[i], err[i])) == 0)
			continue;
		if (outside++ < SHOW)
			show("miss", i, est[i], err[i], &f);
		if (cv[k].outside++ == 0 && outside > SHOW)   /* each clock's first, at least */
			show("miss", i, est[i], err[i], &f);
		if (i != prev_miss + 1 || !runs)
			runs++;
		prev_miss = i;
		if (m > worst)
			worst = m;
		if (m > cv[k].worst)
			cv[k].worst = m;
	}
	if (!outside)
		printf("  none\n");
	else
		printf("  %" PRIu64 " outside their bound, in %zu runs of consecutive stamps\n",
		       outside, runs);
	printf("immediate conversions (newest stamp, every 10 ms): %" PRIu64 ", %" PRIu64
	       " outside, %" PRIu64 " failed\n", imm.count, imm.outside, imm.errors);
	for (uint64_t k = 0; k < imm.outside && k < SHOW; k++)
		show("immediate miss", imm.idx[k], imm.ns[k], imm.err[k], &f);
	/* Stamping pauses while the guest's vCPU does not run: a step inside such a gap
	 * leaves its critical moments unstamped, so say how dense the stamps were. */
	printf("stamping gaps: %zu longer than 1 ms, the longest %.1f us at t=%+.3f us; %.1f us"
	       " between the last stamp before the fault and the first after it\n", long_gaps,
	       (double)max_gap / 1e3, n ? rel_us(&recs[gap_at], &f) : 0.0, (double)fault_gap / 1e3);
	if (wide)
		printf("span of ambiguity: %" PRIu64 " CLOCK_REALTIME bounds > %d ns, from t=%+.3f us"
		       " to t=%+.3f us; the span judged: t=%+.3f us to %+.3f us\n", wide, WIDE_NS,
		       rel_us(&recs[first_wide], &f), rel_us(&recs[last_wide], &f),
		       (double)(span_lo - f.mono) / 1e3, (double)(span_hi - f.mono) / 1e3);
	else
		printf("span of ambiguity: none (no CLOCK_REALTIME bound > %d ns)\n", WIDE_NS);
	printf("per clock: stamps, outside, worst miss, widest bound in the span (stamps there)"
	       " and outside it:\n");
	for (int k = 0; k < NCLK; k++)
		printf("  %-4s %7" PRIu64 " %4" PRIu64 " %8" PRId64 " ns  in span %10" PRId64
		       " ns (%5" PRIu64 ")  outside %10" PRId64 " ns\n",
		       clk[k].name, cv[k].stamps, cv[k].outside, cv[k].worst, cv[k].span_err,
		       cv[k].span_stamps, cv[k].out_err);
	printf("library: backend %s -> %s, clocksource %s, samples %zu held / %" PRIu64
	       " taken, step window %" PRId64 " ns, sampler %s\n", backend_start, info.backend,
	       info.clocksource, info.samples, info.samples_taken, info.step_window_ns,
	       info.sampler_running ? "running" : "stopped");
	printf("FTS-INFO reason=%s\n", info.reason);
	printf("FTS-INFO proof at the start (try %d): %s\n", tries, proof_start[0] ? proof_start : "-");
	printf("FTS-INFO proof at the end: %s\n", info.proof[0] ? info.proof : "-");
	/* outside, worst_miss_ns: conversions after the run whose bound missed the bracket,
	 * every clock; straddling: brackets with a backward step inside (judged as miss()
	 * says); tagged: stamps the library took with clock_gettime (after a counter fault,
	 * or while the warp test had not run), the first at tagged_from_us; counter_stamps:
	 * the others; proof_tries: the processes that ran the warp test, this one the last;
	 * errors: failed conversions, after the run and immediate; wide*: CLOCK_REALTIME
	 * bounds over WIDE_NS, and where they lie relative to the fault (the span of
	 * ambiguity); CLOCK_name_*: each clock's stamps, misses, worst miss, widest bound in
	 * the span (-1: no stamp there) and outside it, failed conversions; the rest from
	 * fts_get_info(). */
	printf("FTS-RESULT scenario=%s fault_ok=%d stamps=%zu outside=%" PRIu64
	       " worst_miss_ns=%" PRId64 " straddling=%" PRIu64 " tagged=%" PRIu64
	       " tagged_from_us=%.1f errors=%" PRIu64 " immediate=%" PRIu64
	       " immediate_outside=%" PRIu64
	       " immediate_worst_ns=%" PRId64 " wide=%" PRIu64 " wide_from_us=%.1f wide_to_us=%.1f"
	       " wide_span_us=%.1f max_err_ns=%" PRId64 " max_gap_us=%.1f fault_gap_us=%.1f"
	       " steps_seen=%" PRIu64 " suspends_seen=%" PRIu64 " samples_taken=%" PRIu64
	       " cpu_skew_ns=%" PRId64 " proof_tries=%d counter_stamps=%" PRIu64
	       " backend=%s clocksource=%s clock_res_ns=%" PRId64,
	       sc->name, f.ok, n, outside, worst, straddling, tagged,
	       tagged ? rel_us(&recs[first_tagged], &f) : 0.0, errors + imm.errors, imm.count,
	       imm.outside, imm.worst, wide, wide ? rel_us(&recs[first_wide], &f) : 0.0,
	       wide ? rel_us(&recs[last_wide], &f) : 0.0,
	       wide ? (double)(recs[last_wide].mono - recs[first_wide].mono) / 1e3 : 0.0, max_err,
	       (double)max_gap / 1e3, (double)fault_gap / 1e3, info.steps_seen,
	       info.suspends_seen, info.samples_taken, info.cpu_skew_ns, tries, n - tagged,
	       info.backend, info.clocksource[0] ? info.clocksource : "-", info.clock_res_ns);
	for (int k = 0; k < NCLK; k++)
		printf(" %s_stamps=%" PRIu64 " %s_outside=%" PRIu64 " %s_worst_miss_ns=%" PRId64
		       " %s_span_stamps=%" PRIu64 " %s_span_err_ns=%" PRId64 " %s_out_err_ns=%" PRId64
		       " %s_errors=%" PRIu64, clk[k].name, cv[k].stamps,
		       clk[k].name, cv[k].outside, clk[k].name, cv[k].worst, clk[k].name,
		       cv[k].span_stamps, clk[k].name, cv[k].span_err, clk[k].name, cv[k].out_err,
		       clk[k].name, cv[k].errors);
	printf("\n");
	/* Each clock's widest bound in the span, as a miss is shown below: a bound that
	 * fails run-scenario's width check is replayed from the record like a miss. */
	for (int k = 0; k < NCLK; k++)
		if (cv[k].span_err >= 0)
			print_stamp("FTS-WIDEST", cv[k].span_at, est, err, &f);
	dump_evidence(est, err, n, &f);
	return 0;
}
