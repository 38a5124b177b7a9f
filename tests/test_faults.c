/* test_faults.c - the process clock on a simulated machine that misbehaves: wall-clock
 * steps of 1 s and 1 hour both ways, leap seconds, a 10-minute suspend, counter jumps,
 * a counter rate change, a counter going backwards, slews. For stamps before, during
 * and after each event the bound must cover the truth; after a step signalled by the
 * kernel the ambiguous window must be under 100 us; counter faults must switch new
 * stamps to the clock and keep the old ones convertible. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "faststamp.h"
#include "simclock.h"

#define MAXSTAMPS 40000

struct stamps {
	size_t n;
	fast_timestamp_t s[MAXSTAMPS];
	int64_t truth[MAXSTAMPS];
	uint64_t t[MAXSTAMPS];   /* true ticks when taken */
};

static struct stamps st;
static int64_t event_t;   /* true ticks at the event */

static void stamp_now(void)
{
	if (st.n == MAXSTAMPS)
		return;
	st.s[st.n] = simc_stamp(&st.truth[st.n]);
	st.t[st.n] = simc.t;
	st.n++;
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
			fts__clock_sample();
		}
	}
}

/* Every stamp's bound covers its truth; returns the widest bound among stamps farther
 * than `window` ns from the event. */
static int64_t judge(const char *what, int64_t window)
{
	int64_t far_err = 0, near_err = 0;
	size_t bad = 0;
	for (size_t i = 0; i < st.n; i++) {
		int64_t ns, err, miss, at = (int64_t)((long double)((int64_t)st.t[i] - event_t) / 2.6L);
		assert_int_equal(fts_convert(&st.s[i], &ns, &err), 0);
		miss = ns > st.truth[i] ? ns - st.truth[i] : st.truth[i] - ns;
		if (miss > err) {
			if (bad++ < 5)
				print_message("  miss: %lld ns from the event, est %lld err %lld truth %lld\n",
					      (long long)at, (long long)ns, (long long)err,
					      (long long)st.truth[i]);
		}
		if (at < -window || at > window) {
			far_err = err > far_err ? err : far_err;
		}
		else
			near_err = err > near_err ? err : near_err;
	}
	print_message("%-26s %zu stamps, %zu uncovered, widest bound outside +-%lld us: %lld ns, "
		      "inside: %lld ns\n", what, st.n, bad, (long long)window / 1000,
		      (long long)far_err, (long long)near_err);
	assert_int_equal(bad, 0);
	return far_err;
}

static void start(uint64_t seed)
{
	st.n = 0;
	since_sample = 0;
	simc_use(seed, 30);
	assert_int_equal(fts_clock_start(), 0);
}

/* A step the kernel signals after `latency` ns: stamps dense around it. */
static void signalled_step(const char *what, long double step)
{
	start(3);
	run(1e9L, 1e6L);
	run(50e6L, 1e6L);               /* half-way between two sampler rounds */
	run(300e3L, 5e3L);              /* dense just before */
	event_t = (int64_t)simc.t;
	simc_step(step);
	run(20e3L, 2e3L);               /* the sampler wakes 20 us later */
	assert_int_equal(fts__clock_on_step(), 0);
	run(300e3L, 5e3L);
	run(1e9L, 1e6L);
	/* outside +-100 us of the step, bounds are those of a quiet clock */
	assert_true(judge(what, 100000) < 2000);
	fts__clock_set_source(NULL);
}

static void steps(void **state)
{
	(void)state;
	signalled_step("step +1 s", 1e9L);
	signalled_step("step -1 s", -1e9L);
	signalled_step("step +1 h", 3600e9L);
	signalled_step("step -1 h", -3600e9L);
	signalled_step("leap second inserted", -1e9L);
	signalled_step("leap second deleted", 1e9L);
}

/* Without the kernel's signal, a step is found at the next sample: covered, but the
 * window is the sampling interval. */
static void unsignalled_step(void **state)
{
	(void)state;
	start(4);
	run(1e9L, 1e6L);
	event_t = (int64_t)simc.t;
	simc_step(-1e9L);
	run(1e9L, 1e6L);
	judge("unsignalled step -1 s", 200000000);
	fts__clock_set_source(NULL);
}

static void suspend(void **state)
{
	struct fts__clock_state cs;
	(void)state;
	start(5);
	run(1e9L, 1e6L);
	event_t = (int64_t)simc.t;
	simc_suspend(600e9L);           /* 10 minutes, the counter stopped */
	run(20e3L, 2e3L);
	assert_int_equal(fts__clock_on_step(), 0);
	run(1e9L, 1e6L);
	assert_true(judge("suspend 10 min", 100000) < 2000);
	fts__clock_state(&cs);
	assert_int_equal(cs.faulted, 0);
	assert_true(cs.suspends >= 1);
	fts__clock_set_source(NULL);
}

/* A suspend the counter runs through (it keeps counting in some sleep states): no
 * step against the counter, no fault. */
static void suspend_counting(void **state)
{
	struct fts__clock_state cs;
	(void)state;
	start(10);
	run(1e9L, 1e6L);
	event_t = (int64_t)simc.t;
	simc_suspend_counting(600e9L);
	run(20e3L, 2e3L);
	assert_int_equal(fts__clock_on_step(), 0);
	run(1e9L, 1e6L);
	/* No step: the interval across the suspend is an ordinary 10-minute one, whose
	 * bound (the rate tolerance over minutes) is wide, but covers. */
	judge("suspend 10 min, counting", 0);
	fts__clock_state(&cs);
	assert_int_equal(cs.faulted, 0);
	assert_int_equal(cs.steps, 0);
	assert_true(cs.suspends >= 1);
	fts__clock_set_source(NULL);
}

/* A counter fault: new stamps fall back to the clock, old ones stay convertible. */
static void counter_fault(const char *what, int64_t jump, uint64_t num, uint64_t den)
{
	struct fts__clock_state cs;
	struct fts_info in = { .size = sizeof(in) };
	fast_timestamp_t fresh;
	int was = fts__store_counter;

	start(6);
	run(1e9L, 1e6L);
	event_t = (int64_t)simc.t;
	simc_counter_fault((uint64_t)((int64_t)simc_counter_at(simc.t) + jump), num, den);
	/* the next sample sees the fault */
	simc_advance(100e6L);
	assert_int_equal(fts__clock_sample(), -EIO);
	fts__clock_state(&cs);
	print_message("%s: %s\n", what, cs.fault);
	assert_int_equal(cs.faulted, 1);
	judge(what, 0);
	/* new stamps are clock readings now, and convert exactly */
	store_fast_timestamp(&fresh);
	assert_true(fresh & FTS_STAMP_CLOCK_TAG);
	assert_int_equal(fts_get_info(&in), 0);
	assert_string_equal(in.backend, "generic");
	assert_non_null(strstr(in.reason, "counter"));
	fts__clock_set_source(NULL);
	assert_int_equal(fts__store_counter, was);
}

static void counter_faults(void **state)
{
	(void)state;
	counter_fault("counter jumps forward 1 s", 2600000000, 1, 1);
	counter_fault("counter jumps back 1 s", -2600000000, 1, 1);
	counter_fault("counter rate +1%", 0, 101, 100);
	counter_fault("counter rate -1%", 0, 99, 100);
	counter_fault("counter goes backwards", -1000000, 1, 1);
}

/* The kernel leaves the counter's clocksource: new stamps fall back, old ones convert. */
static void clocksource_switch(void **state)
{
	struct fts_info in = { .size = sizeof(in) };
	fast_timestamp_t fresh;
	(void)state;

	start(9);
	if (!fts__store_counter) {
		print_message("SKIP: the counter is not in use here (backend generic)\n");
		fts__clock_set_source(NULL);
		skip();
	}
	run(1e9L, 1e6L);
	assert_int_equal(fts__clock_watch(), 0);
	snprintf(simc.clocksource, sizeof(simc.clocksource), "hpet");
	assert_int_equal(fts__clock_watch(), -EIO);
	store_fast_timestamp(&fresh);
	assert_true(fresh & FTS_STAMP_CLOCK_TAG);
	assert_int_equal(fts_get_info(&in), 0);
	assert_string_equal(in.backend, "generic");
	assert_non_null(strstr(in.reason, "to hpet"));
	print_message("%s\n", in.reason);
	judge("after a clocksource switch", 0);
	fts__clock_set_source(NULL);
}

/* Slews move both clocks: never a fault, always covered. */
static void slews(void **state)
{
	struct fts__clock_state cs;
	(void)state;
	start(7);
	event_t = (int64_t)simc.t;
	for (int k = 0; k < 10; k++) {
		simc_slew(k % 2 ? 500 : -500);
		run(300e6L, 1e6L);
	}
	judge("slews of +-500 ppm", 0);
	fts__clock_state(&cs);
	assert_int_equal(cs.faulted, 0);
	fts__clock_set_source(NULL);
}

/* Conversions of increasing stamps never decrease, except across a backward step. */
static void monotonic_conversions(void **state)
{
	int64_t prev = INT64_MIN;
	(void)state;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(steps),
		cmocka_unit_test(unsignalled_step),
		cmocka_unit_test(suspend),
		cmocka_unit_test(suspend_counting),
		cmocka_unit_test(counter_faults),
		cmocka_unit_test(clocksource_switch),
		cmocka_unit_test(slews),
		cmocka_unit_test(monotonic_conversions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
