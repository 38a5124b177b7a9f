/* test_calib_sim.c - fts_calib against a simulated counter and reference clock:
 * drift, slews, steps, noisy brackets, long histories, extrapolation, extreme counters.
 * In every scenario the bound must cover the truth for every probe. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "testmain.h"

#include "faststamp.h"
#include "sim.h"

#define GHZ_RATE (1.0L / 2.6L)       /* ns per tick of a 2.6 GHz counter */
#define TICKS_10MS 26000000ull
#define EPOCH_2026 1798761600000000000.0L

struct result {
	size_t probes, covered, within100;
	long double sum_bound;
	int64_t worst;    /* the largest miss beyond the bound */
	int64_t widest;   /* the largest bound */
};

static void probe(const struct fts_calib *c, const struct sim *s, uint64_t x, struct result *r)
{
	int64_t est, err, truth = sim_truth(s, x), miss;

	assert_int_equal(fts_calib_convert(c, x, &est, &err), 0);
	assert_true(err >= 0);
	miss = est > truth ? est - truth : truth - est;
	r->probes++;
	r->within100 += miss <= 100;
	r->sum_bound += err;
	r->widest = err > r->widest ? err : r->widest;
	if (miss <= err) {
		r->covered++;
	} else if (miss - err > r->worst) {
		r->worst = miss - err;
		print_message("bound missed at counter %llu: est %lld err %lld truth %lld\n",
			      (unsigned long long)x, (long long)est, (long long)err, (long long)truth);
	}
}

static void probe_range(const struct fts_calib *c, struct sim *s, uint64_t from, uint64_t to,
			size_t n, struct result *r)
{
	for (size_t i = 0; i < n; i++)
		probe(c, s, from + sim_uniform(s, to - from), r);
}

static void assert_covered(const struct result *r, const char *what)
{
	print_message("%-28s probes %zu covered %zu within100 %.3f%% mean bound %.1f ns\n", what,
		      r->probes, r->covered, 100.0 * r->within100 / r->probes,
		      (double)(r->sum_bound / r->probes));
	assert_int_equal(r->covered, r->probes);
}

/* Feed n samples every `every` ticks (+- jitter) from t0 with brackets up to w a side. */
static uint64_t feed(struct fts_calib *c, struct sim *s, uint64_t t0, size_t n, uint64_t every,
		     uint64_t w)
{
	uint64_t t = t0;
	for (size_t i = 0; i < n; i++) {
		uint64_t b, a;
		int64_t r;
		sim_sample(s, t, w, &b, &r, &a);
		assert_int_equal(fts_calib_add(c, b, r, a), 0);
		t += every - every / 10 + sim_uniform(s, every / 5);
	}
	return t;
}

static void steady_drift(void **state)
{
	struct fts_calib *c = fts_calib_new();
	struct sim s;
	struct result r = { 0 };
	uint64_t t0 = 1000000000000ull, end;
	(void)state;

	sim_init(&s, t0, EPOCH_2026, GHZ_RATE * (1 + 37e-6L), 1);
	end = feed(c, &s, t0, 1000, TICKS_10MS, 100);
	probe_range(c, &s, t0, end - TICKS_10MS, 20000, &r);
	assert_covered(&r, "steady drift");
	/* the targets: >= 99% within 100 ns of the truth, a mean bound of 400 ns at most
	 * (about 200 here: a bound several times too wide is a fault too) */
	assert_true(r.within100 * 100 >= r.probes * 99);
	assert_true(r.sum_bound / r.probes < 400);
	/* a steady clock's history stays small */
	print_message("samples held after 1000: %zu\n", fts_calib_count(c));
	assert_true(fts_calib_count(c) <= 250);
	fts_calib_free(c);
	sim_free(&s);
}

static void slews_at_sample_points(void **state)
{
	struct fts_calib *c = fts_calib_new();
	struct sim s;
	struct result r = { 0 };
	uint64_t t = 5000, t0 = t;
	static const long double ppm[] = { 0, 500, -500, 120, -300, 0 };
	(void)state;

	sim_init(&s, t0, EPOCH_2026, GHZ_RATE, 2);
	for (int k = 0; k < 6; k++) {
		if (k)
			sim_change(&s, t, GHZ_RATE * (1 + ppm[k] * 1e-6L), 0);
		/* the change is at the sample point t itself */
		t = feed(c, &s, t, 50, TICKS_10MS, 100);
	}
	probe_range(c, &s, t0, t - TICKS_10MS, 20000, &r);
	assert_covered(&r, "slews at sample points");
	assert_true(r.within100 * 100 >= r.probes * 99);
	fts_calib_free(c);
	sim_free(&s);
}

static void slews_between_samples(void **state)
{
	struct fts_calib *c = fts_calib_new();
	struct sim s;
	struct result r = { 0 };
	uint64_t t = 77777, t0 = t;
	(void)state;

	sim_init(&s, t0, EPOCH_2026, GHZ_RATE, 3);
	for (int k = 0; k < 40; k++) {
		t = feed(c, &s, t, 10, TICKS_10MS, 100);
		/* rate changes a third of the way into the next interval, and sometimes
		 * back three intervals later (events are sparse: one in any two intervals) */
		sim_change(&s, t - TICKS_10MS * 2 / 3,
			   GHZ_RATE * (1 + ((long double)sim_uniform(&s, 1000) - 500) * 1e-6L), 0);
		if (k % 3 == 0) {
			t = feed(c, &s, t, 3, TICKS_10MS, 100);
			sim_change(&s, t - TICKS_10MS * 2 / 3, GHZ_RATE, 0);
		}
	}
	t = feed(c, &s, t, 3, TICKS_10MS, 100);
	probe_range(c, &s, t0, t - TICKS_10MS, 20000, &r);
	assert_covered(&r, "slews between samples");
	fts_calib_free(c);
	sim_free(&s);
}

/* A step in the middle of an interval: never interpolated across, always covered. */
/* A step in the middle of an interval: never interpolated across, always covered.
 * Only the interval holding it is ambiguous: its stamps get the middle of the two
 * sides and a bound of half the step (and a little); the intervals around it keep the
 * bounds of a quiet clock. */
static void one_step(long double step, uint64_t seed)
{
	struct fts_calib *c = fts_calib_new();
	struct sim s;
	struct result r = { 0 }, near = { 0 }, inside = { 0 }, before = { 0 }, after = { 0 };
	uint64_t t0 = 123456789, t, at;

	sim_init(&s, t0, EPOCH_2026, GHZ_RATE * (1 - 20e-6L), seed);
	t = feed(c, &s, t0, 100, TICKS_10MS, 100);
	at = t - TICKS_10MS / 2;
	sim_change(&s, at, GHZ_RATE * (1 - 20e-6L), step);
	t = feed(c, &s, t, 100, TICKS_10MS, 100);
	probe_range(c, &s, t0, t - TICKS_10MS, 5000, &r);
	probe_range(c, &s, at - TICKS_10MS, at + TICKS_10MS, 5000, &near);
	/* both sides of the step itself */
	probe(c, &s, at - 1, &near);
	probe(c, &s, at, &near);
	/* the step's own interval (its samples are up to 11 ms either side of it), and
	 * beyond the intervals next to it */
	probe_range(c, &s, at - TICKS_10MS / 3, at + TICKS_10MS / 3, 1000, &inside);
	probe_range(c, &s, t0, at - 3 * TICKS_10MS, 2000, &before);
	probe_range(c, &s, at + 3 * TICKS_10MS, t - TICKS_10MS, 2000, &after);
	assert_covered(&r, "step: whole history");
	assert_covered(&near, "step: around it");
	assert_covered(&inside, "step: its interval");
	print_message("  widest bound: in its interval %lld ns, before %lld ns, after %lld ns\n",
		      (long long)inside.widest, (long long)before.widest, (long long)after.widest);
	assert_true(inside.widest <= fabsl(step) / 2 + 1000000);
	assert_true(before.widest < 5000 && after.widest < 5000);
	fts_calib_free(c);
	sim_free(&s);
}

static void steps_forward_and_back(void **state)
{
	static const long double steps[] = { 1e9L, -1e9L, 3600e9L, -3600e9L, 1e6L, -1e6L,
					     1000, -1000, 100, -100 };
	(void)state;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		print_message("step %.0Lf ns\n", steps[i]);
		one_step(steps[i], 10 + i);
	}
}

/* The rate tolerance (1 ppm by default) is what the bound allows the clock's rate to
 * wander between samples, unseen by them: here it runs 0.9 ppm fast for the first half
 * of every interval and 0.9 ppm slow for the second, so every sample lies on one line
 * and only the tolerance covers the 45 ns the clock strays between them. Exact
 * samples (brackets of 0 ticks), so nothing else widens the bound. */
static void tolerance_covers_wobble(void **state)
{
	struct fts_calib *c = fts_calib_new();
	struct sim s;
	struct result r = { 0 };
	uint64_t t0 = 5000000, t = t0;
	(void)state;

	sim_init(&s, t0, EPOCH_2026, GHZ_RATE, 12);
	for (int i = 0; i < 300; i++) {
		assert_int_equal(fts_calib_add(c, t, sim_truth(&s, t), t), 0);
		sim_change(&s, t, GHZ_RATE * (1 + 0.9e-6L), 0);
		sim_change(&s, t + 13 * TICKS_10MS / 2, GHZ_RATE * (1 - 0.9e-6L), 0);
		t += 13 * TICKS_10MS;   /* samples 130 ms apart */
	}
	assert_int_equal(fts_calib_add(c, t, sim_truth(&s, t), t), 0);
	probe_range(c, &s, t0, t, 20000, &r);
	assert_covered(&r, "wobble within the tolerance");
	/* and the bound is the tolerance's, not more: half an interval at 1 ppm, doubled
	 * for the two cones, plus rounding */
	assert_true(r.widest < 200);
	fts_calib_free(c);
	sim_free(&s);
}

static void noisy_wide_brackets(void **state)
{
	struct fts_calib *c = fts_calib_new();
	struct sim s;
	struct result r = { 0 };
	uint64_t t = 1000000, t0 = t;
	(void)state;

	sim_init(&s, t0, EPOCH_2026, GHZ_RATE * (1 + 250e-6L), 5);
	for (int i = 0; i < 500; i++) {
		uint64_t b, a;
		int64_t ref;
		/* mostly narrow, sometimes very wide (a preempted sampler) */
		uint64_t w = sim_uniform(&s, 9) ? sim_uniform(&s, 200) : sim_uniform(&s, 200000);
		sim_sample(&s, t, w, &b, &ref, &a);
		assert_int_equal(fts_calib_add(c, b, ref, a), 0);
		t += TICKS_10MS + sim_uniform(&s, TICKS_10MS);
	}
	probe_range(c, &s, t0, t - 2 * TICKS_10MS, 20000, &r);
	assert_covered(&r, "noisy and wide brackets");
	fts_calib_free(c);
	sim_free(&s);
}

/* Thousands of later samples, a small capacity: old stamps stay convertible. */
static void old_stamps_after_thousands(void **state)
{
	struct fts_calib_opts o = { .size = sizeof(o), .max_samples = 64 };
	struct fts_calib *c = fts_calib_new_opts(&o);
	struct sim s;
	struct result old = { 0 }, all = { 0 };
	uint64_t t = 999, t0 = t;
	(void)state;

	assert_non_null(c);
	sim_init(&s, t0, EPOCH_2026, GHZ_RATE, 6);
	for (int k = 0; k < 50; k++) {
		t = feed(c, &s, t, 100, TICKS_10MS, 100);
		sim_change(&s, t - TICKS_10MS / 2,
			   GHZ_RATE * (1 + ((long double)sim_uniform(&s, 200) - 100) * 1e-6L), 0);
		assert_true(fts_calib_count(c) <= 64);
	}
	t = feed(c, &s, t, 2, TICKS_10MS, 100);
	probe_range(c, &s, t0, t0 + 100 * TICKS_10MS, 5000, &old);
	probe_range(c, &s, t0, t - TICKS_10MS, 20000, &all);
	assert_covered(&old, "oldest after 5000 samples");
	assert_covered(&all, "all after 5000 samples");
	fts_calib_free(c);
	sim_free(&s);
}

/* Two conversions of one stamp (faststamp.h, THE MODEL: "Two conversions of a stamp"):
 * converted after every sample added, each answer covers the truth, so any two overlap;
 * an answer may move and its bound widen while the run that holds the stamp takes in
 * intervals, and not once MAX_RUN + FINAL_AFTER + 1 (70) samples follow its interval:
 * its run has closed and is a segment for good. A clock with slews (runs end early) and
 * a steady one (runs of 64 intervals). */
#define SETTLED_AFTER 70
static void answers_of_one_stamp(void **state)
{
	(void)state;
	for (int scenario = 0; scenario < 2; scenario++) {
		struct fts_calib *c = fts_calib_new();
		struct sim s;
		enum { NX = 8, NS = 200 };
		uint64_t t0 = 1000000000000ull, t = t0, x[NX];
		int64_t lo[NX], hi[NX], first_err[NX], widest[NX], last_ns[NX], last_err[NX];
		int at[NX], changed_late = 0;

		sim_init(&s, t0, EPOCH_2026, GHZ_RATE * (1 + 37e-6L), 11 + scenario);
		for (int i = 0; i < NS; i++) {
			uint64_t b, a;
			int64_t r;
			if (scenario == 1 && i % 23 == 0)
				sim_change(&s, t, GHZ_RATE * (1 + (i % 3) * 150e-6L), 0);
			sim_sample(&s, t, 100, &b, &r, &a);
			assert_int_equal(fts_calib_add(c, b, r, a), 0);
			if (i % 10 == 5 && i / 10 < NX) {   /* a stamp in the interval after */
				int k = i / 10;
				x[k] = a + TICKS_10MS / 3;
				at[k] = i;
				lo[k] = INT64_MIN;
				hi[k] = INT64_MAX;
				first_err[k] = widest[k] = -1;
			}
			t += TICKS_10MS - TICKS_10MS / 10 + sim_uniform(&s, TICKS_10MS / 5);
			for (int k = 0; k < NX && k * 10 + 5 <= i; k++) {
				int64_t ns, err, truth = sim_truth(&s, x[k]);
				assert_int_equal(fts_calib_convert(c, x[k], &ns, &err), 0);
				if ((ns > truth ? ns - truth : truth - ns) > err)
					fail_msg("stamp %d after sample %d: %lld +- %lld, truth %lld", k, i,
						 (long long)ns, (long long)err, (long long)truth);
				/* overlaps every earlier answer: inside the intersection of them all */
				if (ns + err < lo[k] || ns - err > hi[k])
					fail_msg("stamp %d after sample %d: no overlap with an earlier answer", k, i);
				lo[k] = ns - err > lo[k] ? ns - err : lo[k];
				hi[k] = ns + err < hi[k] ? ns + err : hi[k];
				if (first_err[k] < 0)
					first_err[k] = err;
				widest[k] = err > widest[k] ? err : widest[k];
				if (i > at[k] + SETTLED_AFTER && (ns != last_ns[k] || err != last_err[k]))
					changed_late++;
				last_ns[k] = ns;
				last_err[k] = err;
			}
		}
		for (int k = 0; k < NX; k++)
			print_message("scenario %d stamp %d: first bound %lld, widest %lld, last %lld\n",
				      scenario, k, (long long)first_err[k], (long long)widest[k],
				      (long long)last_err[k]);
		assert_int_equal(changed_late, 0);
		fts_calib_free(c);
		sim_free(&s);
	}
}

/* Nothing converted, ERANGE, outputs untouched: x lies out of the history's reach. */
static void assert_out_of_reach(const struct fts_calib *c, uint64_t x)
{
	int64_t ns = 42, err = 43;

	errno = 0;
	assert_int_equal(fts_calib_convert(c, x, &ns, &err), -1);
	assert_int_equal(errno, ERANGE);
	assert_true(ns == 42 && err == 43);
}

/* Rule 9 on both sides, as far as rule 15 reaches: as far again as the history is long
 * (2 s here); a counter value beyond that is ERANGE. */
static void extrapolation_both_ways(void **state)
{
	struct fts_calib *c = fts_calib_new();
	struct sim s;
	struct result before = { 0 }, after = { 0 };
	uint64_t t0 = 100000000000ull, first, newest, span;
	(void)state;

	sim_init(&s, t0 - 100 * TICKS_10MS * 100, EPOCH_2026, GHZ_RATE * (1 + 400e-6L), 7);
	feed(c, &s, t0, 200, TICKS_10MS, 100);
	assert_int_equal(fts_calib_range(c, &first, &newest), 0);
	span = newest - first;
	assert_true(span > 150 * TICKS_10MS);   /* above the floor of 1 s */
	probe_range(c, &s, first - span, first, 5000, &before);
	probe_range(c, &s, newest, newest + span, 5000, &after);
	probe(c, &s, first - span, &before);
	probe(c, &s, newest + span, &after);
	assert_covered(&before, "extrapolated before");
	assert_covered(&after, "extrapolated after");
	assert_out_of_reach(c, first - span - 1);
	assert_out_of_reach(c, newest + span + 1);
	assert_out_of_reach(c, 0);
	assert_out_of_reach(c, UINT64_MAX);
	fts_calib_free(c);
	sim_free(&s);
}

/* Counter values far from the history's, where its span reaches them (samples ~30 h
 * apart): the fixed point holds; a result that cannot fit an int64 is ERANGE. */
static void extreme_counters(void **state)
{
	struct fts_calib *c = fts_calib_new();
	struct sim s;
	struct result r = { 0 };
	uint64_t t0 = 1ull << 50;
	(void)state;

	/* counter 0 lies within the span (~7 * 2^48) before the first sample */
	sim_init(&s, t0, 1e18L, GHZ_RATE, 8);
	feed(c, &s, t0, 8, 1ull << 48, 100);
	probe(c, &s, 0, &r);
	assert_covered(&r, "counter 0");
	/* UINT64_MAX does not (rule 15) */
	assert_out_of_reach(c, UINT64_MAX);
	fts_calib_free(c);

	/* Where the answer cannot fit, ERANGE, and nothing written. */
	c = fts_calib_new();
	sim_free(&s);
	sim_init(&s, t0, 9.18e18L, GHZ_RATE * 1000, 9);
	feed(c, &s, t0, 10, 1ull << 43, 100);
	{
		uint64_t first, newest;
		assert_int_equal(fts_calib_range(c, &first, &newest), 0);
		assert_out_of_reach(c, newest + (newest - first));
	}
	fts_calib_free(c);
	sim_free(&s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(steady_drift),
		cmocka_unit_test(slews_at_sample_points),
		cmocka_unit_test(slews_between_samples),
		cmocka_unit_test(steps_forward_and_back),
		cmocka_unit_test(tolerance_covers_wobble),
		cmocka_unit_test(noisy_wide_brackets),
		cmocka_unit_test(old_stamps_after_thousands),
		cmocka_unit_test(extrapolation_both_ways),
		cmocka_unit_test(extreme_counters),
		cmocka_unit_test(answers_of_one_stamp),
	};
	return fts_test_run(tests, argc, argv);
}
