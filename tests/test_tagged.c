/* test_tagged.c - tagged stamps (CLOCK_REALTIME readings: the generic backend, stamps
 * after a counter fault) converted to every clock, on a simulated machine whose wall
 * clock steps both ways, passes a leap second, slews and sleeps (src/tagged.c reads
 * its clocks, fts__tagged_set_clock). A consumer converts the newest stamp every
 * millisecond, as a logger would, not knowing of the event; afterwards every stamp is
 * converted to every clock, at once and a second later. Every bound must cover the
 * truth; away from the event, bounds are tight and estimates exact. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "testmain.h"

#include "faststamp.h"
#include "internal.h"
#include "clock.h"
#include "tagged.h"

#define NCLK FTS__NCLK
#define READ_NS 25                /* a clock read takes this long */
#define EVERY_NS 20000            /* a stamp every 20 us */
#define CONSUME_NS 1000000        /* the consumer converts every 1 ms */
#define MAXST 40000

static const char *const names[NCLK] = { "REALTIME", "TAI", "MONOTONIC", "BOOTTIME", "RAW" };

/* The machine: true time t; MONOTONIC runs NTP's rate, MONOTONIC_RAW the true one;
 * the others are offsets from MONOTONIC that events move. */
static struct {
	int64_t t;
	long double rate;             /* MONOTONIC's ns per true ns */
	long double mono_base, raw_base;
	int64_t wall, sleep, tai;     /* REALTIME - MONOTONIC, BOOTTIME - MONOTONIC, TAI - REALTIME */
	int64_t mono_at;              /* t where rate took effect */
} m;

static int64_t truth(int k, int64_t t)
{
	int64_t mono = (int64_t)floorl(m.mono_base + (long double)(t - m.mono_at) * m.rate);
	switch (k) {
	case FTS__CLK_MONOTONIC: return mono;
	case FTS__CLK_BOOTTIME: return mono + m.sleep;
	case FTS__CLK_RAW: return (int64_t)m.raw_base + t;
	case FTS__CLK_TAI: return mono + m.wall + m.tai;
	default: return mono + m.wall;
	}
}

static uint64_t rng = 88172645463325252ull;

static int sim_now(clockid_t id, int64_t *ns)
{
	int k = fts__hw_clk_of(id);
	if (k < 0)
		return -EINVAL;
	/* a read takes READ_NS, and sometimes up to 4 times more (uneven, as real ones) */
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	m.t += READ_NS + (int64_t)(rng % 4 == 0 ? rng % (3 * READ_NS) : 0);
	*ns = truth(k, m.t);
	return 0;
}

static void set_rate(long double rate)
{
	m.mono_base = m.mono_base + (long double)(m.t - m.mono_at) * m.rate;
	m.mono_at = m.t;
	m.rate = rate;
}

static struct {
	size_t n;
	fast_timestamp_t s[MAXST];
	int64_t t[MAXST];
	int64_t of[NCLK][MAXST];
} st;

static void stamp(void)
{
	m.t += READ_NS;
	if (st.n == MAXST)
		return;
	st.s[st.n] = (uint64_t)truth(FTS__CLK_REALTIME, m.t) | FTS_STAMP_CLOCK_TAG;
	st.t[st.n] = m.t;
	for (int k = 0; k < NCLK; k++)
		st.of[k][st.n] = truth(k, m.t);
	st.n++;
}

/* ns of stamping, the consumer converting the newest stamp to every clock each ms. */
static void run(int64_t ns)
{
	for (int64_t x = 0; x < ns; x += EVERY_NS) {
		stamp();
		m.t += EVERY_NS;
		if ((m.t / EVERY_NS) % (CONSUME_NS / EVERY_NS) == 0) {
			for (int k = 1; k < NCLK; k++) {
				int64_t v, e;
				assert_int_equal(fts_convert_clock(&st.s[st.n - 1], fts__hw_clk_id(k), &v, &e), 0);
				assert_true(llabs(v - st.of[k][st.n - 1]) <= e);
			}
		}
	}
}

static void start(void)
{
	m.t = 1000000000;
	m.rate = 1 + 20e-6L;
	m.mono_at = m.t;
	m.mono_base = 3e12L;
	m.raw_base = 2.9e12L;
	m.wall = INT64_C(1798761600000000000) - 3000000000000;
	m.sleep = 0;
	m.tai = 37000000000;
	st.n = 0;
	fts__tagged_set_clock(sim_now);
}

/* CLOCK_REALTIME readings that a step back made happen twice: a tagged stamp holding
 * one may be of either moment, and its bound on the other clocks covers both. */
static int64_t twice_lo, twice_hi;

/* Every stamp to every clock: covered; away from [from, to] (true time) and from the
 * readings made twice, tight and exact. */
static void judge(const char *what, int64_t from, int64_t to)
{
	for (int k = 0; k < NCLK; k++) {
		size_t miss = 0, quiet = 0, exact = 0;
		int64_t widest = 0, widest_quiet = 0;
		for (size_t i = 0; i < st.n; i++) {
			int64_t v, e, off;
			int64_t r = st.of[FTS__CLK_REALTIME][i];
			int q = (st.t[i] < from - 2 * CONSUME_NS || st.t[i] > to + 2 * CONSUME_NS) &&
				(r < twice_lo || r > twice_hi);
			assert_int_equal(fts_convert_clock(&st.s[i], fts__hw_clk_id(k), &v, &e), 0);
			off = llabs(v - st.of[k][i]);
			if (off > e && miss++ < 3)
				print_message("  miss: %s stamp %zu, %.3f ms from the event: est %lld err %lld "
					      "truth %lld\n", names[k], i, (double)(st.t[i] - from) / 1e6,
					      (long long)v, (long long)e, (long long)st.of[k][i]);
			widest = e > widest ? e : widest;
			if (q) {
				quiet++;
				exact += off <= 100;
				widest_quiet = e > widest_quiet ? e : widest_quiet;
			}
		}
		print_message("%-26s %-9s %zu stamps, %zu uncovered; widest bound %lld ns, away from "
			      "the event %lld ns, %.2f%% within 100 ns\n", what, names[k], st.n, miss,
			      (long long)widest, (long long)widest_quiet,
			      quiet ? 100.0 * (double)exact / (double)quiet : 100.0);
		assert_int_equal(miss, 0);
		assert_true(widest_quiet < 50000);
		assert_true(exact * 100 >= quiet * 99);
	}
}

enum ev { STEP, LEAP, SUSPEND, SLEW };

static void event(const char *what, enum ev ev, int64_t amount)
{
	int64_t from, to;

	start();
	run(100000000);
	from = m.t;
	twice_lo = 1;
	twice_hi = 0;
	if ((ev == STEP && amount < 0) || (ev == LEAP && amount > 0)) {
		twice_hi = truth(FTS__CLK_REALTIME, m.t);
		twice_lo = twice_hi - llabs(amount);
	}
	switch (ev) {
	case STEP: m.wall += amount; break;
	case LEAP: m.wall -= amount; m.tai += amount; break;
	case SUSPEND:
		m.t += amount;   /* asleep: MONOTONIC and RAW stand still */
		m.mono_base -= (long double)amount * m.rate;
		m.raw_base -= (long double)amount;
		m.sleep += amount;
		m.wall += amount;   /* REALTIME and BOOTTIME went on */
		break;
	case SLEW: set_rate(m.rate * (1 + (long double)amount * 1e-6L)); break;
	}
	/* Right after a step back, the newest stamp before it is above every reading since:
	 * it is of the era before, alone, and converts as tightly as before the step. */
	if (twice_lo <= twice_hi) {
		int64_t v, e;
		assert_int_equal(fts_convert_clock(&st.s[st.n - 1], CLOCK_MONOTONIC, &v, &e), 0);
		assert_true(llabs(v - st.of[FTS__CLK_MONOTONIC][st.n - 1]) <= e && e < 10000);
	}
	to = m.t + CONSUME_NS;
	run(100000000);
	judge(what, from, to);
	m.t += 1000000000;   /* and a second later, once more */
	judge(what, from, to);
	fts__tagged_set_clock(NULL);
}

static void events(void **unused)
{
	(void)unused;
	event("step +1 s", STEP, 1000000000);
	event("step -1 s", STEP, -1000000000);
	event("step -10 us", STEP, -10000);
	event("leap second inserted", LEAP, 1000000000);
	event("leap second deleted", LEAP, -1000000000);
	event("suspend 10 s", SUSPEND, 10000000000);
	event("slew +500 ppm", SLEW, 500);
	event("ADJ_TICK -10 %", SLEW, -100000);
}

/* Stamps stored over a while, then converted one call each: every call takes a read,
 * and reads a few ns apart must not make the history's rate (their noise would): the
 * estimates stay exact. */
static void converted_in_a_row(void **unused)
{
	(void)unused;
	start();
	for (int i = 0; i < 300; i++) {
		stamp();
		m.t += 1000;
	}
	for (int k = 1; k < NCLK; k++) {
		size_t exact = 0;
		for (size_t i = 0; i < st.n; i++) {
			int64_t v, e;
			assert_int_equal(fts_convert_clock(&st.s[i], fts__hw_clk_id(k), &v, &e), 0);
			assert_true(llabs(v - st.of[k][i]) <= e);
			exact += llabs(v - st.of[k][i]) <= 100;
		}
		print_message("%-9s %zu stamps over 0.3 ms, converted in a row: %zu within 100 ns\n",
			      names[k], st.n, exact);
		assert_true(exact * 100 >= st.n * 99);
	}
	fts__tagged_set_clock(NULL);
}

/* Stamps before the first read, long after, and CLOCK_REALTIME before 1970. */
static void edges(void **unused)
{
	fast_timestamp_t s;
	int64_t v, e;
	(void)unused;

	start();
	stamp();
	m.t += 3600000000000;   /* an hour later */
	run(2000000);
	assert_int_equal(fts_convert_clock(&st.s[0], CLOCK_MONOTONIC, &v, &e), 0);
	print_message("a stamp an hour before the first read: bound %lld ns\n", (long long)e);
	assert_true(llabs(v - st.of[FTS__CLK_MONOTONIC][0]) <= e);
	s = (uint64_t)INT64_C(-5) & ~FTS_STAMP_CLOCK_TAG;
	s |= FTS_STAMP_CLOCK_TAG;
	v = 7;
	errno = 0;
	assert_int_equal(fts_convert_clock(&s, CLOCK_MONOTONIC, &v, &e), -1);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(v, 7);
	fts__tagged_set_clock(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(events),
		cmocka_unit_test(converted_in_a_row),
		cmocka_unit_test(edges),
	};
	return fts_test_run(tests, argc, argv);
}
