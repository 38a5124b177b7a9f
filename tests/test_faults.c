/* test_faults.c - the process clock on a simulated machine that misbehaves: wall-clock
 * steps of 1 s and 1 hour both ways, found at once or late, leap seconds, suspends
 * with the counter stopped or counting, counter jumps, rate changes and reversals, a
 * clocksource switch, slews of every rate the kernel allows, slow and uneven clock
 * reads. For every stamp the bound must cover the truth. The span of ambiguity is the
 * interval between the last sample before an event and the sample that finds it:
 * outside it, bounds must be those of a quiet clock and estimates within 100 ns. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "testmain.h"

#include "faststamp.h"
#include "history.h"
#include "simclock.h"
#include "clock.h"
#include "fresh.h"

#define MAXSTAMPS 40000
#define QUIET_BOUND_NS 2000   /* the widest bound of a quiet clock's stamps here */

struct stamps {
	size_t n;
	fast_timestamp_t s[MAXSTAMPS];
	int64_t truth[MAXSTAMPS];
	uint64_t t[MAXSTAMPS];   /* true ticks when taken */
	int64_t of[FTS__NCLK][MAXSTAMPS];   /* what each clock read then (enum fts__clk) */
};

static struct stamps st;
static uint64_t last_sample_t;     /* true ticks at the latest sample */
static uint64_t amb_from, amb_to;  /* the span of ambiguity, true ticks */
/* A rate change, or a step too small to tell from one, also widens the bands of the
 * intervals next to it, which may have run at either rate: this much either side of
 * the span is not judged quiet. */
static uint64_t amb_margin;
/* The clocks the event moves against the counter (bits of enum fts__clk): those have
 * the span of ambiguity; the others must be quiet across it too. */
#define ALL_CLOCKS ((1u << FTS__NCLK) - 1)
#define CLK(k) (1u << (k))
static unsigned moved;
static const char *const clock_names[FTS__NCLK] = { "REALTIME", "TAI", "MONOTONIC", "BOOTTIME",
						    "MONOTONIC_RAW" };

static void stamp_now(void)
{
	if (st.n == MAXSTAMPS)
		return;
	st.s[st.n] = simc_stamp(&st.truth[st.n]);
	st.t[st.n] = simc.t;
	for (int k = 0; k < FTS__NCLK; k++)
		st.of[k][st.n] = simc_truth_of(k, simc.t);
	st.n++;
}

static int sample_now(void)
{
	int rc = fts__clock_sample();
	last_sample_t = simc.t;
	return rc;
}

static long double since_sample;

/* Run for ns of true time: a stamp every `every` ns, a sampler round every 100 ms. */
static void run(long double ns, long double every)
{
	for (long double t = 0; t < ns; t += every) {
		stamp_now();
		simc_advance(every);
		since_sample += every;
		if (since_sample >= 100e6L) {
			since_sample = 0;
			sample_now();
		}
	}
}

/* An event happens now; the next sample_now() call finds it. */
static void event(unsigned clocks)
{
	amb_from = last_sample_t;
	moved = clocks;
}

static void found(void)
{
	amb_to = last_sample_t;
}

struct verdict {
	size_t n, uncovered, quiet, quiet_within100;
	int64_t quiet_err, amb_err;   /* widest bound outside / inside the span */
};

/* Convert every stamp to clock k: the bound must cover its truth. */
static struct verdict judge_clock(const char *what, int k)
{
	struct verdict v = { .n = st.n };
	for (size_t i = 0; i < st.n; i++) {
		int64_t ns, err, miss, truth = st.of[k][i];
		int amb = (moved & CLK(k)) && st.t[i] + amb_margin >= amb_from &&
			  st.t[i] <= amb_to + amb_margin;
		assert_int_equal(fts_convert_clock(&st.s[i], fts__hw_clk_id(k), &ns, &err), 0);
		miss = ns > truth ? ns - truth : truth - ns;
		if (miss > err && v.uncovered++ < 5)
			print_message("  miss: %s %.0Lf us from the span's start, est %lld err %lld "
				      "truth %lld\n", clock_names[k],
				      ((long double)st.t[i] - amb_from) / 2600, (long long)ns,
				      (long long)err, (long long)truth);
		if (amb) {
			v.amb_err = err > v.amb_err ? err : v.amb_err;
		} else {
			v.quiet++;
			v.quiet_within100 += miss <= 100;
			v.quiet_err = err > v.quiet_err ? err : v.quiet_err;
		}
	}
	print_message("%-28s %-13s %zu stamps, %zu uncovered; span of ambiguity %.1f ms: widest "
		      "bound %lld ns; outside it: widest %lld ns, %.2f%% within 100 ns\n", what,
		      clock_names[k], v.n, v.uncovered,
		      (moved & CLK(k)) ? (double)(amb_to - amb_from) / 2.6e6 : 0.0,
		      (long long)v.amb_err, (long long)v.quiet_err,
		      v.quiet ? 100.0 * (double)v.quiet_within100 / (double)v.quiet : 100.0);
	assert_int_equal(v.uncovered, 0);
	return v;
}

static void assert_quiet(const struct verdict *v);

/* Every clock: each bound covers; a clock the event did not move is quiet through it
 * (moved ALL_CLOCKS: nothing is claimed of it). CLOCK_REALTIME's verdict. */
static struct verdict judge(const char *what)
{
	struct verdict rt = { 0 };

	for (int k = 0; k < FTS__NCLK; k++) {
		struct verdict v = judge_clock(what, k);
		if (k == FTS__CLK_REALTIME) {
			int64_t ns, err;
			rt = v;
			/* fts_convert is exactly fts_convert_clock(CLOCK_REALTIME) */
			for (size_t i = 0; i < st.n; i += 97) {
				int64_t cns, cerr;
				assert_int_equal(fts_convert(&st.s[i], &ns, &err), 0);
				assert_int_equal(fts_convert_clock(&st.s[i], CLOCK_REALTIME, &cns, &cerr), 0);
				assert_true(ns == cns && err == cerr);
			}
		} else if (!(moved & CLK(k)) && moved != ALL_CLOCKS) {
			assert_quiet(&v);
		}
	}
	return rt;
}

/* Outside the span of ambiguity the clock is quiet: narrow bounds, exact estimates. */
static void assert_quiet(const struct verdict *v)
{
	assert_true(v->quiet_err < QUIET_BOUND_NS);
	assert_true(v->quiet_within100 * 100 >= v->quiet * 99);
}

static void start(uint64_t seed)
{
	st.n = 0;
	since_sample = 0;
	amb_from = amb_to = amb_margin = 0;
	moved = ALL_CLOCKS;
	simc_use(seed, 30);
	assert_int_equal(fts_clock_start(), 0);
	last_sample_t = simc.t;
}

static void state(struct fts__clock_state *cs)
{
	fts__clock_state(cs);
}

/* A step the kernel signals, the sampler waking `late` ns after it: stamps dense
 * around it. However late it wakes, stamps between the last sample and its wake-up
 * get a bound covering both sides. */
static void signalled_step(const char *what, long double step, long double late, int leap)
{
	struct fts__clock_state cs;
	struct verdict v;

	start(3);
	if (fabsl(step) < 1e6L)
		amb_margin = 260000000;   /* a 100 ms sampler period */
	run(1e9L, 1e6L);
	run(50e6L, 1e6L);               /* half-way between two sampler rounds */
	run(300e3L, 5e3L);              /* dense just before */
	event(leap ? CLK(FTS__CLK_REALTIME) : CLK(FTS__CLK_REALTIME) | CLK(FTS__CLK_TAI));
	if (leap)
		simc_leap(step < 0 ? 1 : -1);
	else
		simc_step(step);
	run(late, 2e3L);
	assert_int_equal(sample_now(), 0);
	found();
	run(300e3L, 5e3L);
	run(1e9L, 1e6L);
	v = judge(what);
	assert_quiet(&v);
	state(&cs);
	assert_int_equal(cs.steps, 1);
	assert_int_equal(cs.faulted, 0);
	/* the reported span is the interval that held the step */
	assert_true(llabs(cs.ambiguous_ns - (int64_t)((amb_to - amb_from) / 2.6L)) < 1000);
	fts__clock_set_source(NULL);
}

static void steps(void **unused)
{
	(void)unused;
	signalled_step("step +1 s", 1e9L, 20e3L, 0);
	signalled_step("step -1 s", -1e9L, 20e3L, 0);
	signalled_step("step +1 h", 3600e9L, 20e3L, 0);
	signalled_step("step -1 h", -3600e9L, 20e3L, 0);
	signalled_step("leap second inserted", -1e9L, 20e3L, 1);
	signalled_step("leap second deleted", 1e9L, 20e3L, 1);
	/* a slow wake-up (an emulator, an overloaded machine) */
	signalled_step("step -1 s, found 5 ms late", -1e9L, 5e6L, 0);
	signalled_step("step +1 s, found 30 ms late", 1e9L, 30e6L, 0);
	signalled_step("step -10 us", -10e3L, 20e3L, 0);
}

/* Without the kernel's signal, a step is found at the next sample. */
static void unsignalled_step(void **unused)
{
	struct verdict v;
	(void)unused;
	start(4);
	run(1e9L, 1e6L);
	event(CLK(FTS__CLK_REALTIME) | CLK(FTS__CLK_TAI));
	simc_step(-1e9L);
	run(100e6L, 1e6L);              /* the next round finds it */
	found();
	run(1e9L, 1e6L);
	v = judge("unsignalled step -1 s");
	assert_quiet(&v);
	fts__clock_set_source(NULL);
}

static void suspend(void **unused)
{
	struct fts__clock_state cs;
	struct verdict v;
	(void)unused;
	start(5);
	run(1e9L, 1e6L);
	event(CLK(FTS__CLK_REALTIME) | CLK(FTS__CLK_TAI) | CLK(FTS__CLK_BOOTTIME));
	simc_suspend(600e9L);           /* 10 minutes, the counter stopped */
	run(20e3L, 2e3L);
	assert_int_equal(sample_now(), 0);
	found();
	run(1e9L, 1e6L);
	v = judge("suspend 10 min");
	assert_quiet(&v);
	state(&cs);
	assert_int_equal(cs.faulted, 0);
	assert_int_equal(cs.suspends, 1);
	fts__clock_set_source(NULL);
}

/* A suspend the counter runs through (it keeps counting in some sleep states, and in
 * emulators): no fault, and the counter's rate is learnt again after it. */
static void suspend_counting(void **unused)
{
	struct fts__clock_state cs;
	(void)unused;
	start(10);
	run(1e9L, 1e6L);
	event(ALL_CLOCKS);
	simc_suspend_counting(600e9L);
	run(20e3L, 2e3L);
	assert_int_equal(sample_now(), 0);
	found();
	run(1e9L, 1e6L);
	/* No step against the counter: the interval across the suspend is an ordinary
	 * 10-minute one, whose bound (the rate tolerance over minutes) is wide, but
	 * covers. */
	judge("suspend 10 min, counting");
	state(&cs);
	assert_int_equal(cs.faulted, 0);
	assert_int_equal(cs.steps, 0);
	assert_int_equal(cs.suspends, 1);
	/* and the rate holds after it: no fault over the next seconds */
	run(2e9L, 10e6L);
	state(&cs);
	assert_int_equal(cs.faulted, 0);
	fts__clock_set_source(NULL);
}

/* A counter fault: new stamps fall back to the clock, old ones stay convertible, also
 * those taken between the last good sample and the one that found the fault. */
static void counter_fault(const char *what, int64_t jump, uint64_t num, uint64_t den)
{
	struct fts__clock_state cs;
	struct fts_info in = { .size = sizeof(in) };
	fast_timestamp_t fresh;
	struct verdict v;
	int was = fts__store_counter;

	start(6);
	if (num != den)
		amb_margin = 260000000;
	run(1e9L, 1e6L);
	event(ALL_CLOCKS);
	simc_counter_fault((uint64_t)((int64_t)simc_counter_at(simc.t) + jump), num, den);
	size_t before = st.n;
	run(60e6L, 1e6L);               /* stamps on the faulty counter, not yet found */
	/* A counter gone back repeats values the history already maps to earlier times:
	 * the stamps taken on it until the fault is found carry no promise (documented). */
	if (jump < 0)
		st.n = before;
	assert_int_equal(sample_now(), -EIO);
	found();
	state(&cs);
	print_message("%s: %s\n", what, cs.fault);
	assert_int_equal(cs.faulted, 1);
	v = judge(what);
	assert_quiet(&v);
	if (jump < -260000000)   /* back by more than it ran since: seen as such */
		assert_non_null(strstr(cs.fault, "backwards"));
	/* The sample that found the fault closed the history over the stamps taken since
	 * the last good one: their bounds stay what they are, however much later they are
	 * converted (the counter's fault does not leak into them). */
	simc_advance(3600e9L);
	{
		struct verdict later = judge(what);
		assert_true(later.amb_err <= v.amb_err + v.amb_err / 100 + 1000);
	}
	/* new stamps are clock readings now, and convert exactly */
	store_fast_timestamp(&fresh);
	assert_true(fresh & FTS_STAMP_CLOCK_TAG);
	assert_int_equal(fts_get_info(&in), 0);
	assert_string_equal(in.backend, "generic");
	assert_non_null(strstr(in.reason, "counter"));
	fts__clock_set_source(NULL);
	assert_int_equal(fts__store_counter, was);
}

static void counter_faults(void **unused)
{
	(void)unused;
	counter_fault("counter jumps forward 1 s", 2600000000, 1, 1);
	counter_fault("counter jumps forward 1 ms", 2600000, 1, 1);
	counter_fault("counter rate +1%", 0, 101, 100);
	counter_fault("counter rate -1%", 0, 99, 100);
	counter_fault("counter rate +0.1%", 0, 1001, 1000);
	counter_fault("counter jumps back 1 s", -2600000000, 1, 1);
	counter_fault("counter goes backwards", -1000000, 1, 1);
}

/* The kernel leaves the counter's clocksource: new stamps fall back, old ones convert,
 * also those taken since the last sample. */
static void clocksource_switch(void **unused)
{
	struct fts_info in = { .size = sizeof(in) };
	fast_timestamp_t fresh;
	struct verdict v;
	(void)unused;

	start(9);
	if (!fts__store_counter) {
		fts__clock_set_source(NULL);
		FTS_SKIP("the counter is not in use here (backend generic)");
	}
	amb_margin = 260000000;
	run(1e9L, 1e6L);
	assert_int_equal(fts__clock_watch(), 0);
	event(ALL_CLOCKS);
	snprintf(simc.clocksource, sizeof(simc.clocksource), "hpet");
	simc_slew(200);                 /* the new clocksource's rate */
	run(50e6L, 1e6L);
	assert_int_equal(fts__clock_watch(), -EIO);
	last_sample_t = simc.t;
	found();
	store_fast_timestamp(&fresh);
	assert_true(fresh & FTS_STAMP_CLOCK_TAG);
	assert_int_equal(fts_get_info(&in), 0);
	assert_string_equal(in.backend, "generic");
	assert_non_null(strstr(in.reason, "to hpet"));
	assert_string_equal(in.clocksource, "hpet");   /* now, not at the choice */
	print_message("%s\n", in.reason);
	v = judge("after a clocksource switch");
	assert_quiet(&v);
	fts__clock_set_source(NULL);
}

/* Slews move realtime and monotonic alike, at any rate the kernel allows (NTP's
 * 500 ppm, ADJ_TICK's 10 %, chrony's 83,333 ppm): never a fault, always covered. */
static void slew(const char *what, long double ppm)
{
	struct fts__clock_state cs;
	(void)what;
	start(7);
	moved = ALL_CLOCKS & ~CLK(FTS__CLK_RAW);   /* MONOTONIC_RAW takes no slew */
	for (int k = 0; k < 8; k++) {
		simc_slew(k % 2 ? ppm : -ppm);
		run(300e6L, 1e6L);
	}
	judge(what);
	state(&cs);
	assert_int_equal(cs.faulted, 0);
	assert_int_equal(cs.steps, 0);
	fts__clock_set_source(NULL);
}

static void slews(void **unused)
{
	(void)unused;
	slew("slews of +-500 ppm", 500);
	slew("ADJ_TICK +-0.1%", 1000);
	slew("ADJ_TICK +-1%", 10000);
	slew("chrony's max slew rate", 83333);
	slew("ADJ_TICK +-10%", 100000);
}

/* A coarse clocksource (acpi_pm: the clocks move every 279 ns) read in brackets far
 * narrower than that, quiet and then through ADJ_TICK +1 % and back: each read returns
 * what the clock was up to a resolution before it, and rule 1 holds only with every
 * bracket begun that much earlier (resolution.c). Every bound covers; the resolution is
 * found, and the first samples are spaced by it. */
static void coarse_clock(void **unused)
{
	uint64_t t0;
	(void)unused;
	st.n = 0;
	since_sample = 0;
	amb_from = amb_to = amb_margin = 0;
	moved = ALL_CLOCKS;   /* no clock reads within 100 ns of its line here */
	simc_use(13, 30);
	simc.quantum = 726;   /* 279.2 ns at 2.6 GHz */
	t0 = simc.t;
	assert_int_equal(fts_clock_start(), 0);
	last_sample_t = simc.t;
	print_message("resolution found: %llu ticks; first calibration %.1f ms\n",
		      (unsigned long long)fts__clock_hot()->res_ticks, (double)(simc.t - t0) / 2.6e6);
	assert_true(fts__clock_hot()->res_ticks >= 726 && fts__clock_hot()->res_ticks < 2 * 726);
	assert_true(simc.t - t0 >= 2 * 20000 * 726);   /* two gaps of 20,000 resolutions */
	for (int k = 0; k < 3; k++) {
		run(700e6L, 50e3L);
		simc_slew(k == 0 ? 10000 : 30);
	}
	/* the lab's bound around events on such a clock, every clock, plus across the
	 * changes of rate (1 % twice) the change over the kernel's lag (rule 5) */
	for (int k = 0; k < FTS__NCLK; k++)
		assert_true(judge_clock("a coarse clock", k).quiet_err < 10000 + 1.05e-2 * FTS__LAG_NS);
	fts__clock_set_source(NULL);
}

/* Rule 5, the kernel's lag behind a new rate (P3), on the clock the fault lab's
 * acpi_pm guest has: coarse (279 ns) and read slowly and unevenly (1-3 us, an emulator's
 * port reads). ADJ_TICK +1 % and back, each reckoned d before a sample (0 to 2.1 ms)
 * and published lag later, before the sample or after it (the sample then reads the
 * old line), with stamps every 10 us around it; lags of 0.1, 0.5, 1.2 and 2.5 ms and
 * nine tenths of FTS__LAG_NS (a vCPU stopped inside the kernel's update). Every bound
 * covers. With the lag taken as 500 us, 628 stamps were not covered, the first in a
 * lag of 1.2 ms reckoned 5 us before a sample. */
static void late_rate_change(void **unused)
{
	static const long double lags[5] = { 100e3L, 500e3L, 1.2e6L, 2.5e6L, 0.9 * FTS__LAG_NS };
	(void)unused;
	st.n = 0;
	since_sample = 0;
	amb_from = amb_to = amb_margin = 0;
	moved = ALL_CLOCKS;
	simc_use(17, 30);
	simc.quantum = 726;      /* 279.2 ns at 2.6 GHz */
	simc.per_read = 2600;    /* 1 us a read, */
	simc.jitter = 5200;      /* up to 2 us more */
	assert_int_equal(fts_clock_start(), 0);
	last_sample_t = simc.t;
	run(1e9L, 5e6L);
	for (int c = 0; c < 5 * 15; c++) {
		long double lag = lags[c / 15], d = (c % 15) * 150e3L + 5e3L;
		run(100e6L - since_sample, 100e6L - since_sample);   /* to a sample, */
		run(100e6L - d - 200e3L, 100e6L - d - 200e3L);       /* to d + 200 us before the next */
		run(200e3L, 10e3L);
		run(lag, 10e3L);            /* reckoned: read on at the old rate, the sample too */
		simc_slew_late(c % 2 ? 0 : 10000, lag);   /* published */
		run(fmaxl(d - lag, 0) + 1e6L, 10e3L);
		run(300e6L, 5e6L);
	}
	print_message("%zu stamps\n", st.n);
	judge("ADJ_TICK +-1%, published late");
	fts__clock_set_source(NULL);
}

/* Clock reads that take 10-20 us each, unevenly (an emulator): no false step, suspend
 * or fault, and every bound covers. */
static void slow_uneven_reads(void **unused)
{
	struct fts__clock_state cs;
	(void)unused;
	start(11);
	simc.per_read = 26000;
	simc.jitter = 26000;
	run(10e9L, 2e6L);
	judge("slow, uneven clock reads");
	state(&cs);
	assert_int_equal(cs.faulted, 0);
	assert_int_equal(cs.steps, 0);
	assert_int_equal(cs.suspends, 0);
	fts__clock_set_source(NULL);
}

/* A stamp just past the newest sample, converted at once, after the clock changed
 * since that sample: a new rate (ADJ_TICK +-1 %, +-10 %), a step or a suspend. No
 * sample was due (1 ms after the last), so only the clock read the conversion takes
 * after the stamp can show the change; the bound must cover it whatever the change.
 * after_read: the change comes 0 to 4 ms after a fresh conversion's read, and the stamp
 * 5 ms after it (rule 12: the read's line must not serve it); else 0 to 0.5 ms after the
 * sample, and the stamp 1 ms after it. */
static void change_then_fresh(const char *what, long double ppm, long double step,
			      long double suspended, int after_read)
{
	long double every = after_read ? 200e3L : 25e3L, span = after_read ? 5e6L : 1e6L;
	size_t bad = 0;
	int64_t widest = 0;

	for (int k = 0; k < 20; k++) {
		fast_timestamp_t s;
		int64_t truth, ns, err;

		start((after_read ? 40 : 20) + (uint64_t)k);
		run(1e9L, 1e6L);
		run(50e6L, 1e6L);                  /* half-way to the next round */
		assert_int_equal(sample_now(), 0);
		if (after_read) {
			simc_advance(1e6L);
			s = simc_stamp(&truth);   /* fresh: its conversion reads the clock */
			assert_int_equal(fts_convert(&s, &ns, &err), 0);
		}
		simc_advance(k * every);           /* the change */
		if (ppm)
			simc_slew(ppm);
		if (step)
			simc_step(step);
		if (suspended)
			simc_suspend_counting(suspended);
		simc_advance(span - k * every);
		s = simc_stamp(&truth);
		simc_advance(2e3L);
		assert_int_equal(fts_convert(&s, &ns, &err), 0);
		bad += llabs(ns - truth) > err;
		widest = err > widest ? err : widest;
		if (llabs(ns - truth) > err)
			print_message("  %s, %d: est - truth %lld ns, bound %lld ns\n", what, k,
				      (long long)(ns - truth), (long long)err);
		fts__clock_set_source(NULL);
	}
	print_message("%-28s 20 fresh stamps%s, %zu uncovered, widest bound %lld ns\n", what,
		      after_read ? " after a fresh line" : "", bad, (long long)widest);
	assert_int_equal(bad, 0);
}

static void fresh_after_change(const char *what, long double ppm, long double step)
{
	change_then_fresh(what, ppm, step, 0, 0);
}

static void fresh_stamps_after_change(void **unused)
{
	(void)unused;
	fresh_after_change("ADJ_TICK +1%", 10000, 0);
	fresh_after_change("ADJ_TICK -1%", -10000, 0);
	fresh_after_change("ADJ_TICK +10%", 100000, 0);
	fresh_after_change("step +1 s", 30, 1e9L);
	fresh_after_change("step -1 s", 30, -1e9L);
	fresh_after_change("step +20 us", 30, 20e3L);
}

/* Rule 12: a fresh conversion's clock read serves the stamps after it while the
 * kernel's timekeeping epoch holds; any change of the realtime line (a step, a new rate,
 * a suspend) moves the epoch, and the next fresh stamp reads the clock again. For each
 * change, at 0 to 4 ms after the read: a stamp converted after it must be covered. With
 * no change, stamps up to 10 ms after the read convert without reading the clock, within
 * 100 ns of the truth; a source that cannot tell its epoch reads the clock every time. */
static void fresh_line_across(const char *what, long double ppm, long double step,
			      long double suspended)
{
	change_then_fresh(what, ppm, step, suspended, 1);
}

static void fresh_line(void **unused)
{
	uint64_t reads;
	size_t n = 0, far = 0;
	(void)unused;

	fresh_line_across("ADJ_TICK +10%", 100000, 0, 0);
	fresh_line_across("ADJ_TICK -1%", -10000, 0, 0);
	fresh_line_across("slew +500 ppm", 500, 0, 0);
	fresh_line_across("step +1 s", 0, 1e9L, 0);
	fresh_line_across("step -1 s", 0, -1e9L, 0);
	fresh_line_across("step +20 us", 0, 20e3L, 0);
	fresh_line_across("step -2 us", 0, -2e3L, 0);
	fresh_line_across("suspend, counter running", 0, 0, 3e9L);

	/* no change: 10 ms of stamps on the line of one read, after a full interval (a
	 * short one's band is wide, and so is the line's growth: its span is short) */
	start(60);
	run(1e9L, 1e6L);
	run(50e6L, 1e6L);
	assert_int_equal(sample_now(), 0);
	st.n = 0;
	/* the first read after idle is slow, its bracket wide: no line through it */
	simc.jitter = 26000;
	stamp_now();
	assert_int_equal(fts_convert(&st.s[0], &(int64_t){ 0 }, NULL), 0);
	simc.jitter = 0;
	simc_advance(1e5L);
	stamp_now();
	assert_int_equal(fts_convert(&st.s[1], &(int64_t){ 0 }, NULL), 0);
	reads = simc.realtime_reads;
	for (int i = 0; i < 94; i++) {
		int64_t ns, err;
		simc_advance(1e5L);
		stamp_now();
		assert_int_equal(fts_convert(&st.s[st.n - 1], &ns, &err), 0);
		n++;
		far += llabs(ns - st.truth[st.n - 1]) > 100 || llabs(ns - st.truth[st.n - 1]) > err;
	}
	print_message("rule 12: %zu stamps over 9.4 ms after one read: %llu clock reads, %zu "
		      "more than 100 ns off or uncovered\n", n,
		      (unsigned long long)(simc.realtime_reads - reads), far);
	assert_int_equal(simc.realtime_reads, reads);
	assert_int_equal(far, 0);
	/* past its span, or without an epoch: a read each */
	simc_advance(2.1e6L);
	stamp_now();
	assert_int_equal(fts_convert(&st.s[st.n - 1], &(int64_t){ 0 }, NULL), 0);
	assert_true(simc.realtime_reads > reads);
	simc.no_epoch = 1;
	for (int i = 0; i < 3; i++) {
		reads = simc.realtime_reads;
		simc_advance(1e5L);
		stamp_now();
		assert_int_equal(fts_convert(&st.s[st.n - 1], &(int64_t){ 0 }, NULL), 0);
		assert_true(simc.realtime_reads > reads);
	}
	fts__clock_set_source(NULL);
}

/* The library's own sampler thread on the simulated machine, a round at a time: it
 * samples every round while conversions come, the history stays quiet and covers, and
 * it exits after 100 rounds without one. */
static void sampler_thread(void **unused)
{
	struct fts__clock_state cs;
	struct verdict v;
	uint64_t before;
	int64_t ns;
	(void)unused;

	st.n = 0;
	amb_from = amb_to = amb_margin = 0;
	simc_use_thread(30, 30);
	assert_int_equal(fts_clock_start(), 0);
	fts__clock_state(&cs);
	assert_int_equal(cs.running, 1);
	before = cs.samples_taken;
	for (int r = 0; r < 30; r++) {
		for (int i = 0; i < 100; i++) {   /* 100 ms of stamps, 1 ms apart */
			stamp_now();
			simc_advance(1e6L);
		}
		/* an old stamp: keeps the thread busy, takes no sample itself */
		assert_int_equal(fts_convert(&st.s[0], &ns, NULL), 0);
		assert_true(simc_round());
		if (r == 1)   /* the first calibration's 2 ms intervals give wider bands */
			amb_to = simc.t;
	}
	fts__clock_state(&cs);
	print_message("30 rounds of the sampler thread: %llu samples\n",
		      (unsigned long long)(cs.samples_taken - before));
	assert_true(cs.samples_taken - before >= 30);
	v = judge("the sampler thread's history");
	assert_quiet(&v);
	/* idle: it exits */
	for (int r = 0; r < 120 && simc_round(); r++)
		;
	fts__clock_state(&cs);
	assert_int_equal(cs.running, 0);
	assert_int_equal(simc_stop_thread(), 0);
}

/* Rule 12's chain goes on from each round's tail: the sampler's hook makes a line from
 * it whatever its own first read was (a slow one, against the narrowest seen, must not
 * stop it), so that a fresh stamp 50 ms after a round renews the line rather than read
 * the history once the previous chain ends. */
static void fresh_chain_carried(void **unused)
{
	const struct fts__fresh *fr = &fts__fresh_lines.line[FTS__CLK_REALTIME];
	int carried = 0;
	(void)unused;

	start(61);
	run(1e9L, 1e6L);
	for (int r = 0; r < 10; r++) {
		uint64_t newest;
		fast_timestamp_t s;
		int64_t truth, ns, err;

		run(100e6L, 1e6L);   /* a round at its end */
		newest = fts__calib_newest_counter(fts__clock_history(FTS__CLK_REALTIME));
		if (r % 2) {   /* the hook's first clock read (after a counter read): slow */
			simc.slow_ticks = 20000;
			simc.slow_in = 2;
		}
		fts__fresh_rebase();
		/* a line from this round's tail: its chain ends 100 ms after it */
		carried += __atomic_load_n(&fr->chain_end, __ATOMIC_RELAXED) >
			   newest + (uint64_t)(90e6 * 2.6);   /* 90 ms of the 2.6 GHz counter */
		simc_advance(50e6L);
		s = simc_stamp(&truth);
		assert_int_equal(fts_convert(&s, &ns, &err), 0);
		assert_true(llabs(ns - truth) <= err);
	}
	print_message("rule 12: the chain carried on from 10 rounds' tails: %d\n", carried);
	assert_int_equal(carried, 10);
	fts__clock_set_source(NULL);
}

/* Rule 12 in a process whose rounds make no line (one attached to faststamp serve, or
 * here one whose sampler's hook is not called): past the chain of renewals a renewal
 * bridges from the history's newest tail, and where its read is too wide to make a
 * line (the first after idle), it keeps that tail as the line, one that serves no
 * stamp itself; the renewals after it bridge from it without the history, and the
 * next chain's first renewal takes the next tail. Every conversion within its bound. */
static void fresh_tail_kept(void **unused)
{
	const struct fts__fresh *fr = &fts__fresh_lines.line[FTS__CLK_REALTIME];
	fast_timestamp_t s;
	int64_t truth, ns, err;
	(void)unused;

	start(67);
	run(1e9L, 1e6L);
	s = simc_stamp(&truth);   /* a line, from narrow reads */
	assert_int_equal(fts_convert(&s, &ns, &err), 0);
	assert_true(llabs(ns - truth) <= err);
	for (int r = 0; r < 3; r++) {
		uint64_t newest;

		run(150e6L, 1e6L);   /* samples, no line from them: the chain ends */
		newest = fts__calib_newest_counter(fts__clock_history(FTS__CLK_REALTIME));
		for (int i = 0; i < 4; i++) {
			simc_advance(5e6L);
			s = simc_stamp(&truth);
			simc.slow_ticks = 20000;   /* the renewal's clock read (after a counter read) */
			simc.slow_in = 2;
			assert_int_equal(fts_convert(&s, &ns, &err), 0);
			assert_true(llabs(ns - truth) <= err);
			assert_true(__atomic_load_n(&fr->c0, __ATOMIC_RELAXED) == newest);
			assert_true(__atomic_load_n(&fr->c1, __ATOMIC_RELAXED) < newest);
			assert_true(__atomic_load_n(&fr->chain_end, __ATOMIC_RELAXED) >
				    newest + (uint64_t)(90e6 * 2.6));   /* 90 ms of the counter */
		}
	}
	fts__clock_set_source(NULL);
}

/* Conversions of increasing stamps never decrease, except across a backward step. */
static void monotonic_conversions(void **unused)
{
	int64_t prev = INT64_MIN;
	(void)unused;
	start(8);
	for (int k = 0; k < 5; k++) {
		simc_slew(k * 100.0L - 200);
		run(500e6L, 1e5L);
	}
	for (size_t i = 0; i < st.n; i++) {
		int64_t ns;
		assert_int_equal(fts_convert(&st.s[i], &ns, NULL), 0);
		assert_true(ns >= prev);
		prev = ns;
	}
	fts__clock_set_source(NULL);
}

/* Rule 15 in the live process, for one stamp alone (fts_convert's own path for a stamp
 * inside the history or before it) as for a batch: on a machine booted 0.1 s of counter
 * after its counter started (CLOCK_MONOTONIC_RAW -0.1 s at counter 0), a stamp before
 * the boot is one no process stored (-ERANGE, nothing written), and one after the boot
 * but before the history's first sample converts, on every clock. */
static void one_stamp_before_the_boot(void **unused)
{
	fast_timestamp_t boot = (fast_timestamp_t)(1e8L * 2.6L);   /* 0.1 s at 2.6 GHz */
	fast_timestamp_t before[2] = { 0, boot / 2 }, after = boot + boot / 2;
	(void)unused;

	simc_use(5, 30);
	sim_free(&simc.raw);
	sim_init(&simc.raw, 0, -1e8L, 1 / 2.6L, 7);
	assert_int_equal(fts_clock_start(), 0);
	for (int k = 0; k < FTS__NCLK; k++) {
		clockid_t id = fts__hw_clk_id(k);
		for (int i = 0; i < 2; i++) {
			int64_t ns = 42, err = 43, arr[2] = { 42, 42 };
			errno = 0;
			assert_int_equal(fts_convert_clock(&before[i], id, &ns, &err), -1);
			assert_int_equal(errno, ERANGE);
			assert_true(ns == 42 && err == 43);
			errno = 0;
			assert_int_equal(fts_convert_clock(&before[i], id, &ns, NULL), -1);
			assert_int_equal(errno, ERANGE);
			assert_int_equal(fts_convert_array_clock(before, 2, id, arr, NULL), -1);
			assert_int_equal(errno, ERANGE);
		}
		int64_t ns, err;
		assert_int_equal(fts_convert_clock(&after, id, &ns, &err), 0);
		assert_true(err > 0);
	}
	fts__clock_set_source(NULL);
}

/* Sorted batches (fts_convert_array, with and without bounds) against one-by-one
 * conversion, over a history with a step, a slew and segments of every kind, for
 * batches that start and end anywhere: old and fresh stamps, across segment ends and
 * the step. Inside the history a batch gives the very ns of one-by-one conversion;
 * past the newest sample (one clock read for the batch), ns within its bound. */
static void sorted_batches(void **unused)
{
	static int64_t one[MAXSTAMPS], oerr[MAXSTAMPS], bat[MAXSTAMPS], berr[MAXSTAMPS];
	struct fts__clock_state cs;
	size_t fresh_from, differ = 0, uncovered = 0, batches = 0;
	uint64_t rng = 7;
	(void)unused;

	start(77);
	run(1.05e9L, 1e6L);
	simc_step(250e6L);   /* unsignalled: found by the next sample's offsets */
	run(0.7e9L, 0.5e6L);
	simc_slew(400);
	run(0.7e9L, 0.5e6L);
	state(&cs);
	assert_false(cs.faulted);
	/* stamps past the newest sample */
	for (fresh_from = st.n; fresh_from > 0 &&
	     st.s[fresh_from - 1] > fts__calib_newest_counter(fts__clock_history(FTS__CLK_REALTIME)); fresh_from--)
		;
	assert_true(fresh_from < st.n);
	for (size_t i = 0; i < st.n; i++)
		assert_int_equal(fts_convert(&st.s[i], &one[i], &oerr[i]), 0);
	for (int k = 0; k < 200; k++) {
		size_t a, b;
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		a = k ? (rng >> 33) % st.n : 0;
		b = k ? a + 1 + (rng >> 17) % (st.n - a) : st.n;
		for (int with_err = 0; with_err < 2; with_err++) {
			assert_int_equal(fts_convert_array(&st.s[a], b - a, &bat[a],
							   with_err ? &berr[a] : NULL), 0);
			for (size_t i = a; i < b; i++) {
				int64_t miss = bat[i] > st.truth[i] ? bat[i] - st.truth[i]
								    : st.truth[i] - bat[i];
				if (i < fresh_from)
					differ += bat[i] != one[i] || (with_err && berr[i] != oerr[i]);
				else
					uncovered += miss > (with_err ? berr[i] : oerr[i] + 1000);
			}
			batches++;
		}
	}
	print_message("%zu sorted batches over %zu stamps (%zu fresh): %zu inside the history "
		      "differ from one by one, %zu fresh outside their bound\n", batches, st.n,
		      st.n - fresh_from, differ, uncovered);
	assert_int_equal(differ, 0);
	assert_int_equal(uncovered, 0);
}

/* What the process clock knows of a source, as seen from outside. */
struct observed {
	struct fts__clock_state cs;
	char source[16], path[256], note[256];
	int count[FTS__NCLK];
	int store_counter;
};

static void observe(struct observed *o)
{
	memset(o, 0, sizeof(*o));
	fts__clock_state(&o->cs);
	fts__clock_sharing(o->source, sizeof(o->source), o->path, sizeof(o->path), o->note,
			   sizeof(o->note));
	for (int k = 0; k < FTS__NCLK; k++)
		o->count[k] = fts_calib_count(fts__clock_history(k));
	o->store_counter = fts__store_counter;
}

/* A new source forgets all the process clock found of the one before, whatever it was:
 * samples, a step, a fault, the look for the shared history. Every observable of it
 * is then as after the first reset (the thread counts alone run on). */
static void reset_forgets_all(void **unused)
{
	struct observed first, again;
	const struct fts_calib *hist[FTS__NCLK];
	const char *was = getenv("FASTSTAMP_SHARED");
	char saved[256];
	unsigned gen;
	(void)unused;

	snprintf(saved, sizeof(saved), "%s", was ? was : "");
	setenv("FASTSTAMP_SHARED", "0", 1);
	simc_use(5, 30);
	observe(&first);
	assert_int_equal(first.cs.samples_taken, 0);
	assert_string_equal(first.note, "");
	/* samples, a step, a look for the shared history (refused), a fault */
	assert_int_equal(fts_clock_start(), 0);
	run(0.3e9L, 1e6L);
	simc_step(1e9L);
	assert_int_equal(sample_now(), 0);
	simc_counter_fault(simc_counter_at(simc.t) + 2600000000u, 1, 1);
	assert_int_equal(sample_now(), -EIO);
	observe(&again);
	assert_int_equal(again.cs.faulted, 1);
	assert_true(again.cs.steps >= 1);
	assert_string_equal(again.note, "FASTSTAMP_SHARED=0");
	gen = fts__clock_gen();
	/* The histories' structs lie in the process clock's object, in the page of its hot
	 * part (an old stamp's look-up takes no heap page), and are kept by a reset. */
	for (int k = 0; k < FTS__NCLK; k++) {
		hist[k] = fts__clock_history(k);
		assert_true((uintptr_t)hist[k] - (uintptr_t)fts__clock_hot() < 2048);
	}

	simc_use(5, 30);
	observe(&again);
	assert_true(fts__clock_gen() != gen);   /* a line made before is not used */
	assert_int_equal(again.cs.samples_taken, first.cs.samples_taken);
	assert_int_equal(again.cs.steps, first.cs.steps);
	assert_int_equal(again.cs.suspends, first.cs.suspends);
	assert_int_equal(again.cs.running, first.cs.running);
	assert_int_equal(again.cs.faulted, first.cs.faulted);
	assert_int_equal(again.cs.ambiguous_ns, first.cs.ambiguous_ns);
	assert_string_equal(again.cs.fault, first.cs.fault);
	assert_string_equal(again.cs.proof, first.cs.proof);
	assert_int_equal(again.cs.skew_ns, first.cs.skew_ns);
	assert_int_equal(again.cs.period_ns, first.cs.period_ns);
	assert_string_equal(again.source, first.source);
	assert_string_equal(again.path, first.path);
	assert_string_equal(again.note, first.note);
	for (int k = 0; k < FTS__NCLK; k++) {
		assert_int_equal(again.count[k], first.count[k]);
		assert_ptr_equal(fts__clock_history(k), hist[k]);
	}
	assert_int_equal(again.store_counter, first.store_counter);
	fts__clock_set_source(NULL);
	if (was)
		setenv("FASTSTAMP_SHARED", saved, 1);
	else
		unsetenv("FASTSTAMP_SHARED");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(steps),
		cmocka_unit_test(unsignalled_step),
		cmocka_unit_test(suspend),
		cmocka_unit_test(suspend_counting),
		cmocka_unit_test(counter_faults),
		cmocka_unit_test(clocksource_switch),
		cmocka_unit_test(slews),
		cmocka_unit_test(slow_uneven_reads),
		cmocka_unit_test(coarse_clock),
		cmocka_unit_test(late_rate_change),
		cmocka_unit_test(fresh_stamps_after_change),
		cmocka_unit_test(fresh_line),
		cmocka_unit_test(sampler_thread),
		cmocka_unit_test(fresh_chain_carried),
		cmocka_unit_test(fresh_tail_kept),
		cmocka_unit_test(monotonic_conversions),
		cmocka_unit_test(one_stamp_before_the_boot),
		cmocka_unit_test(sorted_batches),
		cmocka_unit_test(reset_forgets_all),
	};
	return fts_test_run(tests, argc, argv);
}
