/* test_health.c - the health judgement of the process clock (src/health.c), directly:
 * samples made by hand, one event each, and the verdict and what was seen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "testmain.h"

#include "health.h"

#define TPN 2.6L   /* counter ticks per ns */

/* The machine at true time t ns: the counter (plus jump), MONOTONIC_RAW (awake time),
 * MONOTONIC, and the offsets that events move. */
static struct {
	int64_t jump;           /* counter ticks added */
	int64_t asleep;         /* ns the counter did not count (a sleep it stopped in) */
	int64_t raw_asleep;     /* ns MONOTONIC_RAW and MONOTONIC did not count */
	int64_t wall, boot, tai;
} m;

static struct fts__psample at(int64_t t)
{
	struct fts__psample s = { .cpu = -1 };
	uint64_t c = (uint64_t)((long double)(t - m.asleep) * TPN) + (uint64_t)m.jump;
	int64_t mono = 5000000000000 + t - m.raw_asleep;

	s.b = c;
	s.a = c + 30;
	s.hb = c + 40;
	s.ha = c + 120;
	s.clk.raw = 7000000000000 + t - m.raw_asleep;
	/* RAW in a bracket of its own, as the sampler reads it (health.c times the
	 * counter against it there) */
	s.k[FTS__CLK_RAW] = (struct fts__cbracket){ .b = c + 130, .ns = s.clk.raw + 58, .a = c + 170 };
	s.clk.mono = mono;
	s.clk.boot = mono + m.boot;
	s.clk.rt = mono + m.wall;
	s.clk.tai = mono + m.wall + m.tai;
	s.rt = s.clk.rt;
	return s;
}

static struct fts__health h;
static char why[160];

/* Ten healthy samples 100 ms apart, the rate learnt; the clock at t. */
static int64_t settle(void)
{
	int64_t t = 1000000000;
	struct fts__seen e;

	memset(&m, 0, sizeof(m));
	m.wall = INT64_C(1700000000000000000);
	m.tai = 37000000000;
	h = (struct fts__health){ 0 };
	for (int i = 0; i < 10; i++, t += 100000000) {
		struct fts__psample s = at(t);
		assert_int_equal(fts__health_judge(&h, &s, 1, "", &e, why, sizeof(why)), FTS__HEALTHY);
		assert_false(e.step || e.suspend || e.tai_step || e.ran_on);
		fts__health_learn(&h, &s, &e);
		h.last = s;
		h.have_last = 1;
	}
	assert_true(h.ticks_per_ns > 2.599L && h.ticks_per_ns < 2.601L);
	return t;
}

static enum fts__verdict judge_at(int64_t t, int watch, struct fts__seen *e)
{
	struct fts__psample s = at(t);
	why[0] = '\0';
	return fts__health_judge(&h, &s, watch, " on CPU 1", e, why, sizeof(why));
}

static void first_sample_is_healthy(void **unused)
{
	struct fts__psample s;
	struct fts__seen e;
	(void)unused;
	memset(&m, 0, sizeof(m));
	h = (struct fts__health){ 0 };
	s = at(1000);
	assert_int_equal(fts__health_judge(&h, &s, 1, "", &e, why, sizeof(why)), FTS__HEALTHY);
	fts__health_learn(&h, &s, &e);
	assert_int_equal(h.anchor.b, s.b);
	assert_true(h.ticks_per_ns == 0);
}

static void counter_faults(void **unused)
{
	struct fts__seen e;
	int64_t t;
	(void)unused;

	t = settle();
	m.jump = -1000;   /* back, past the previous sample's bracket */
	assert_int_equal(judge_at(t - 100000000 + 100, 1, &e), FTS__FAULT_DROP);
	assert_non_null(strstr(why, "backwards"));

	t = settle();
	m.jump = 2600000;   /* 1 ms forward */
	assert_int_equal(judge_at(t, 1, &e), FTS__FAULT_KEEP);
	assert_non_null(strstr(why, "left its rate"));
	assert_non_null(strstr(why, "on CPU 1"));

	/* 2 us against MONOTONIC_RAW: a fault where the clocksource is computed from the
	 * counter (watch_offsets), within the rate's tolerance elsewhere */
	t = settle();
	m.jump = 5200;
	assert_int_equal(judge_at(t, 1, &e), FTS__FAULT_KEEP);
	assert_non_null(strstr(why, "moved"));
	assert_int_equal(judge_at(t, 0, &e), FTS__HEALTHY);
}

/* Below a fault, where the clocksource is computed from the counter: how far it moved,
 * at most, from the brackets and the rate (the skew takes it); nothing from a sample
 * whose health bracket is too wide to tell (a preempted read), nor where not watched. */
static void offsets_below_a_fault(void **unused)
{
	struct fts__psample s;
	struct fts__seen e;
	int64_t t;
	(void)unused;

	t = settle();
	m.jump = (int64_t)(300 * TPN);
	assert_int_equal(judge_at(t, 1, &e), FTS__HEALTHY);
	print_message("300 ns: moved at most %lld ns\n", (long long)e.moved_ns);
	assert_true(e.moved_ns >= 300 && e.moved_ns <= 300 + 60);
	assert_int_equal(judge_at(t, 0, &e), FTS__HEALTHY);
	assert_int_equal(e.moved_ns, 0);
	/* a wide bracket of RAW's own (a preempted read) measures nothing; a wide health
	 * bracket does not keep RAW's from measuring */
	s = at(t);
	s.k[FTS__CLK_RAW].a += (uint64_t)(1000 * TPN);
	assert_int_equal(fts__health_judge(&h, &s, 1, "", &e, why, sizeof(why)), FTS__HEALTHY);
	assert_int_equal(e.moved_ns, 0);
	s = at(t);
	s.ha += (uint64_t)(1000 * TPN);
	assert_int_equal(fts__health_judge(&h, &s, 1, "", &e, why, sizeof(why)), FTS__HEALTHY);
	assert_true(e.moved_ns >= 300 && e.moved_ns <= 300 + 60);
}

static void wall_clock_events(void **unused)
{
	struct fts__seen e;
	int64_t t;
	(void)unused;

	t = settle();
	m.wall += 1000000000;   /* settimeofday +1 s: REALTIME and TAI step */
	assert_int_equal(judge_at(t, 1, &e), FTS__HEALTHY);
	assert_true(e.step && e.tai_step && !e.suspend && !e.ran_on);
	assert_int_equal(e.step_ns, 1000000000);

	t = settle();
	m.wall -= 1000000000;   /* a leap second inserted: REALTIME back, TAI on */
	m.tai += 1000000000;
	assert_int_equal(judge_at(t, 1, &e), FTS__HEALTHY);
	assert_true(e.step && !e.tai_step);

	t = settle();
	m.wall += 800;          /* under STEP_MIN_NS: not an event */
	assert_int_equal(judge_at(t, 1, &e), FTS__HEALTHY);
	assert_false(e.step);
}

static void sleeps(void **unused)
{
	struct fts__seen e;
	int64_t t;
	(void)unused;

	/* 10 s asleep, the counter stopped with MONOTONIC_RAW: BOOTTIME and REALTIME went on */
	t = settle();
	m.asleep = m.raw_asleep = 10000000000;
	m.boot += 10000000000;
	m.wall += 10000000000;
	assert_int_equal(judge_at(t + 10000000000, 1, &e), FTS__HEALTHY);
	assert_true(e.suspend && !e.ran_on);
	assert_int_equal(e.suspend_ns, 10000000000);
	assert_int_equal(e.awake_ns, 100000000);

	/* the same, the counter counting through it: MONOTONIC_RAW did not */
	t = settle();
	m.raw_asleep = 10000000000;
	m.boot += 10000000000;
	m.wall += 10000000000;
	assert_int_equal(judge_at(t + 10000000000, 1, &e), FTS__HEALTHY);
	assert_true(e.suspend && e.ran_on);
	{
		struct fts__psample s = at(t + 10000000000);
		fts__health_learn(&h, &s, &e);
		assert_int_equal(h.anchor.b, s.b);   /* the rate's baseline starts again */
	}

	/* the counter far past the sleep (over SUSPEND_SLACK_NS more): a fault */
	t = settle();
	m.raw_asleep = 10000000000;
	m.boot += 10000000000;
	m.asleep = -5000000000;
	assert_int_equal(judge_at(t + 10000000000, 1, &e), FTS__FAULT_KEEP);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_sample_is_healthy),
		cmocka_unit_test(counter_faults),
		cmocka_unit_test(offsets_below_a_fault),
		cmocka_unit_test(wall_clock_events),
		cmocka_unit_test(sleeps),
	};
	return fts_test_run(tests, argc, argv);
}
