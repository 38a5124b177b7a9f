/* test_history.c - the history over a whole day and on a harsh clock, with the default
 * options: accuracy at every age (the last minute, the last hour, every hour of the
 * day), bounds that always cover, and the memory it takes. Costs are printed here and
 * measured by faststamp bench, not asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "testmain.h"
#include "faststamp.h"
#include "daysim.h"

struct tally {
	size_t probes, covered, within100;
	long double sum_bound;
};

static void tally_probe(const struct fts_calib *c, const struct daysim *d, uint64_t x,
			struct tally *t, int accuracy)
{
	int64_t est, err, truth = sim_truth(&d->s, x), miss;

	assert_int_equal(fts_calib_convert(c, x, &est, &err), 0);
	miss = est > truth ? est - truth : truth - est;
	if (miss > err && t->probes - t->covered < 3)
		print_message("  miss at %llu: est %lld err %lld truth %lld\n", (unsigned long long)x,
			      (long long)est, (long long)err, (long long)truth);
	t->probes++;
	t->covered += miss <= err;
	if (accuracy) {
		t->within100 += miss <= 100;
		t->sum_bound += err;
	}
}

static long rss_kib(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(const char *what, const struct tally *t)
{
	size_t acc = t->within100 ? t->probes : 0;
	(void)acc;
	print_message("%-24s %7zu probes, %zu covered, %.3f%% within 100 ns, mean bound %.0Lf ns\n",
		      what, t->probes, t->covered, 100.0 * (double)t->within100 / (double)t->probes,
		      t->sum_bound / (long double)t->probes);
}

/* A day of an NTP-disciplined clock at 10 samples a second. */
static void ntp_day(void **state)
{
	struct daysim d;
	struct fts_calib *c;
	struct tally all = { 0 }, minute = { 0 }, hour = { 0 };
	long rss0, rss1;
	double t0, t1;
	const uint64_t per_hour = 36000;   /* samples */
	(void)state;

	assert_int_equal(daysim_ntp(&d, 24 * per_hour, 1), 0);
	rss0 = rss_kib();
	c = fts_calib_new();
	assert_non_null(c);
	t0 = now_s();
	for (size_t i = 0; i < d.nsamp; i++)
		assert_int_equal(fts_calib_add(c, d.b[i], d.r[i], d.a[i]), 0);
	t1 = now_s();
	rss1 = rss_kib();
	print_message("a day: %zu samples, %zu knots kept, %ld KiB more resident (%.1f bytes a "
		      "knot), %.0f ns an add\n", d.nsamp, fts_calib_count(c), rss1 - rss0,
		      (double)(rss1 - rss0) * 1024 / (double)fts_calib_count(c),
		      (t1 - t0) * 1e9 / (double)d.nsamp);
	/* A sanitizer's shadow memory grows with the history's: what is resident then is
	 * not the library's alone, and is only printed. */
	if (!FTS_TEST_SANITIZED) {
		assert_true(rss1 - rss0 <= 16 * 1024);
		assert_true((rss1 - rss0) * 1024 <= 64 * (long)fts_calib_count(c));
	}
	for (int h = 0; h < 24; h++) {
		struct tally t = { 0 };
		uint64_t from = d.b[h * per_hour], to = d.a[(h + 1) * per_hour - 1];
		for (int i = 0; i < 2000; i++)
			tally_probe(c, &d, from + (uint64_t)(sim_u(&d.s) * (long double)(to - from)), &t, 1);
		if (h == 23)
			hour = t;
		all.probes += t.probes;
		all.covered += t.covered;
		all.within100 += t.within100;
		all.sum_bound += t.sum_bound;
		if (t.within100 * 1000 < t.probes * 999 || h % 6 == 5) {
			char what[32];
			snprintf(what, sizeof(what), "hour %d", h);
			report(what, &t);
		}
		assert_int_equal(t.covered, t.probes);
		assert_true(t.within100 * 1000 >= t.probes * 999);
	}
	for (int i = 0; i < 2000; i++) {
		uint64_t to = d.a[d.nsamp - 1], from = to - (uint64_t)(60e9L * DAYSIM_HZ);
		tally_probe(c, &d, from + (uint64_t)(sim_u(&d.s) * (long double)(to - from)), &minute, 1);
	}
	report("the last minute", &minute);
	report("the last hour", &hour);
	report("the whole day", &all);
	assert_int_equal(minute.covered, minute.probes);
	assert_true(minute.within100 * 1000 >= minute.probes * 999);
	assert_true(all.sum_bound / (long double)all.probes <= 500);
	fts_calib_free(c);
	daysim_free(&d);
}

/* Is x in an interval between samples that holds a step? */
static int near_step(const struct daysim *d, uint64_t x)
{
	for (size_t k = 0; k < d->nsteps; k++) {
		size_t lo = 0, hi = d->nsamp - 1;
		while (lo < hi) {   /* the last sample at or before the step */
			size_t mid = lo + (hi - lo + 1) / 2;
			if (d->b[mid] <= d->steps[k])
				lo = mid;
			else
				hi = mid - 1;
		}
		if (x >= d->b[lo] && (lo + 1 >= d->nsamp || x <= d->a[lo + 1]))
			return 1;
	}
	return 0;
}

/* The harsh clock: rates that jump, steps, gaps of 5-500 ms, wide brackets. */
static void harsh(void **state)
{
	struct daysim d;
	struct fts_calib *c;
	struct tally away = { 0 }, steps = { 0 };
	(void)state;

	assert_int_equal(daysim_harsh(&d, 20000, 2), 0);
	c = fts_calib_new();
	assert_non_null(c);
	for (size_t i = 0; i < d.nsamp; i++)
		assert_int_equal(fts_calib_add(c, d.b[i], d.r[i], d.a[i]), 0);
	print_message("harsh: %zu samples, %zu steps, %zu knots kept\n", d.nsamp, d.nsteps,
		      fts_calib_count(c));
	for (int i = 0; i < 100000; i++) {
		uint64_t from = d.b[0], to = d.a[d.nsamp - 1];
		uint64_t x = from + (uint64_t)(sim_u(&d.s) * (long double)(to - from));
		int at_step = near_step(&d, x);
		tally_probe(c, &d, x, at_step ? &steps : &away, !at_step);
	}
	report("away from steps", &away);
	print_message("%-24s %7zu probes, %zu covered\n", "in step intervals", steps.probes,
		      steps.covered);
	assert_int_equal(away.covered, away.probes);
	assert_int_equal(steps.covered, steps.probes);
	assert_true(away.within100 * 100 >= away.probes * 99);
	assert_true(away.sum_bound / (long double)away.probes <= 1000);
	fts_calib_free(c);
	daysim_free(&d);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ntp_day),
		cmocka_unit_test(harsh),
	};
	return fts_test_run(tests, argc, argv);
}
