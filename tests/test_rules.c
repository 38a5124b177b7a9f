/* test_rules.c - each rule of the history's model (faststamp.h, "THE MODEL"), driven
 * directly through its function in src/estimate.c, and the rules that belong to
 * storage (9-11) through the public calls. A test per rule, named after it. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testmain.h"
#include "clock.h"
#include "estimate.h"
#include "history.h"
#include "resolution.h"
#include "internal.h"
#include "faststamp.h"
#include "sim.h"

#define RATE (1 / 2.6)   /* ns per tick of a 2.6 GHz counter */
#define PPM 1e-6

static struct fts__pt pt(double x, double h, double r)
{
	return (struct fts__pt){ .x = x, .h = h, .r = r, .xi = (__int128)x, .ri = (__int128)r };
}

/* Exact samples of a clock at rate ppm off nominal, every len ticks from 0. */
static struct fts__ival ival_at_rate(double ppm, double len)
{
	struct fts__pt a = pt(0, 0, 0), b = pt(len, 0, floor(len * RATE * (1 + ppm * PPM)));
	return fts__estimate_ival_of(&a, &b);
}

/* Rule 1: at the bracket's middle, within half the bracket at the rate, plus 1 ns. */
static void rule1_sample_uncertainty(void **state)
{
	struct fts__pt p = pt(1000, 260, 5);
	(void)state;
	assert_true(fabs(fts__estimate_pt_uncertainty(&p, RATE) - (260 * RATE + 1)) < 1e-9);
	p.h = 0;
	assert_true(fabs(fts__estimate_pt_uncertainty(&p, RATE) - 1) < 1e-12);
}

/* Rule 1 on a coarse clock (resolution.c): differences between reads that lie on a
 * grid give the grid, the coarsest that fits; reads that spread, or that took equal
 * times and never found the clock still, give none. */
static void rule1_resolution(void **unused)
{
	int64_t d[60];
	uint64_t rng = 7;
	(void)unused;

	/* acpi_pm read every 1-2 us: 3 to 7 of its 279.365 ns steps, each rounded down */
	for (int i = 0; i < 60; i++) {
		long double a = 1000.0L + 279.365L * (3 + i % 5) * (1 + i / 5);
		d[i] = (int64_t)floorl(a + 279.365L * (3 + i % 5)) - (int64_t)floorl(a);
	}
	assert_int_equal(fts__res_grid(d, 60), 280);
	/* read faster than it moves: still, or one step */
	for (int i = 0; i < 60; i++)
		d[i] = i % 3 ? 0 : 279 + i % 2;
	assert_int_equal(fts__res_grid(d, 60), 280);
	/* only ever two or four steps seen: the coarser grid, on the safe side */
	for (int i = 0; i < 60; i++)
		d[i] = i % 2 ? 559 : 1117;
	assert_int_equal(fts__res_grid(d, 60), 559);
	/* a fine clock: rises spread over every value */
	for (int i = 0; i < 60; i++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		d[i] = 20 + (int64_t)(rng >> 33) % 500;
	}
	assert_int_equal(fts__res_grid(d, 60), 0);
	/* equal rises and never still: reads of equal times, nothing told */
	for (int i = 0; i < 60; i++)
		d[i] = 300 + i % 2;
	assert_int_equal(fts__res_grid(d, 60), 0);
	/* too few rises, or a grid finer than looked for */
	for (int i = 0; i < 60; i++)
		d[i] = i < FTS__RES_MIN_RISES - 1 ? 279 * (1 + i % 3) : 0;
	assert_int_equal(fts__res_grid(d, 60), 0);
	for (int i = 0; i < 60; i++)
		d[i] = 4 * (1 + i % 5);
	assert_int_equal(fts__res_grid(d, 60), 0);
}

/* Rule 2: the rate between middles; its noise from the brackets and the readings. */
static void rule2_interval_rate(void **state)
{
	struct fts__pt a = pt(0, 100, 0), b = pt(26000000, 100, 10000000);
	struct fts__ival v;
	(void)state;

	v = fts__estimate_ival_of(&a, &b);
	assert_true(fabs(v.rate - 10000000.0 / 26000000) < 1e-12);
	/* the true rate over the actual reads lies within rate +- noise */
	assert_true(v.rate + v.noise >= (10000000.0 + 1) / (26000000 - 200));
	assert_true(v.rate - v.noise <= (10000000.0 - 1) / (26000000 + 200));
	assert_true(v.noise < 1e-5 * v.rate);
	/* overlapping brackets: the rate is not known from them */
	b = pt(150, 100, 10000000);
	v = fts__estimate_ival_of(&a, &b);
	assert_true(v.noise >= fabs(v.rate));
}

/* Rule 3: a step makes its interval's rate an outlier; a slew of any size does not. */
static void rule3_step_verdict(void **state)
{
	struct fts__ival l = ival_at_rate(0, 26e7), r = ival_at_rate(0, 26e7), x;
	(void)state;

	/* 1 ms of step in 100 ms: 10,000 ppm beyond its neighbours */
	x = ival_at_rate(10000, 26e7);
	assert_true(fts__estimate_is_step(&x, &l, &r));
	x = ival_at_rate(-10000, 26e7);
	assert_true(fts__estimate_is_step(&x, &l, &r));
	/* below the threshold, not a step */
	x = ival_at_rate(1500, 26e7);
	assert_false(fts__estimate_is_step(&x, &l, &r));
	/* a slew of 10 % (ADJ_TICK): the interval holding the change lies between */
	r = ival_at_rate(100000, 26e7);
	x = ival_at_rate(60000, 26e7);
	assert_false(fts__estimate_is_step(&x, &l, &r));
	/* but beyond both sides it is one */
	x = ival_at_rate(110000, 26e7);
	assert_true(fts__estimate_is_step(&x, &l, &r));
	/* it takes both sides to tell which of two intervals stepped: one side, or a side
	 * that does not know its rate (a 1 us interval), says nothing */
	x = ival_at_rate(10000, 26e7);
	assert_false(fts__estimate_is_step(&x, &l, NULL));
	assert_false(fts__estimate_is_step(&x, NULL, NULL));
	r = ival_at_rate(0, 2600);
	assert_false(fts__estimate_is_step(&x, &l, &r));
	/* standing still or going back: a step; the source says so */
	x.rate = 0;
	assert_true(fts__estimate_is_step(&x, NULL, NULL));
	x = ival_at_rate(0, 26e7);
	x.step = 1;
	assert_true(fts__estimate_is_step(&x, &l, &l));
}

/* Rule 4: the neighbours' rates, over spans of half the interval, skipping a step. */
static void rule4_band(void **state)
{
	/* points 10 ms apart but for a 100 ms interval (2-3) and a 1 ms one (4-5) */
	double xs[] = { 0, 26e6, 52e6, 312e6, 314.6e6, 317.2e6, 343.2e6, 369.2e6 };
	struct fts__pt p[8];
	int step[8] = { 0 };
	struct fts__ival n, self;
	struct fts__band b;
	(void)state;

	for (int i = 0; i < 8; i++)
		p[i] = pt(xs[i], 10, floor(xs[i] * RATE));
	/* right of the 100 ms interval 2: from 3, extended over 3-4 and 4-5 (2.6 M ticks
	 * each) but no further (two at most); left: 1-2 (26 M) is short of 130 M, so
	 * extended to 0-2 */
	assert_true(fts__estimate_neighbour(p, step, 8, 2, 1, &n));
	assert_true(fabs(n.rate - (p[5].r - p[3].r) / (p[5].x - p[3].x)) < 1e-15);
	assert_true(fts__estimate_neighbour(p, step, 8, 2, -1, &n));
	assert_true(fabs(n.rate - (p[2].r - p[0].r) / (p[2].x - p[0].x)) < 1e-15);
	/* a step beside it is skipped (one at most) */
	step[3] = 1;
	assert_true(fts__estimate_neighbour(p, step, 8, 2, 1, &n));
	assert_true(fabs(n.rate - (p[6].r - p[4].r) / (p[6].x - p[4].x)) < 1e-15);
	step[4] = 1;
	assert_false(fts__estimate_neighbour(p, step, 8, 2, 1, &n));
	/* the band: both sides' rates give or take their noise, widened by the tolerance */
	{
		struct fts__ival a = ival_at_rate(-5, 26e7), c = ival_at_rate(7, 26e7);
		self = ival_at_rate(3, 26e7);
		b = fts__estimate_band_of(&self, &a, &c, 1e-6);
		assert_true(b.lo <= a.rate - a.noise && b.lo >= a.rate - a.noise - 2e-6 * RATE);
		assert_true(b.hi >= c.rate + c.noise && b.hi <= c.rate + c.noise + 2e-6 * RATE);
		/* its own rate counts, unless it holds a step */
		self = ival_at_rate(300, 26e7);
		b = fts__estimate_band_of(&self, &a, &c, 1e-6);
		assert_true(b.hi >= self.rate + self.noise);
		self.step = 1;
		b = fts__estimate_band_of(&self, &a, &c, 1e-6);
		assert_true(b.hi < c.rate + c.noise + 2e-6 * RATE);
		/* nothing beside it: its own rate, widened by the step threshold */
		b = fts__estimate_band_of(&self, NULL, NULL, 1e-6);
		assert_true(b.lo < self.rate * (1 - 1900 * PPM) && b.hi > self.rate * (1 + 1900 * PPM));
	}
}

/* Truth of a clock at rate a up to t, then b, plus a step s at ts (relative ticks). */
static double path(double x, double a, double t, double b, double s, double ts)
{
	double v = x <= t ? a * x : a * t + b * (x - t);
	return x >= ts ? v + s : v;
}

/* Is (x, y) within the envelope: its edges run straight between consecutive points? */
static int inside(const struct fts__env *e, double x, double y)
{
	int o[4] = { 0, 1, 2, 3 };

	for (int i = 0; i < 4; i++)   /* the points in order of x */
		for (int j = i + 1; j < 4; j++)
			if (e->x[o[j]] < e->x[o[i]]) {
				int t = o[i];
				o[i] = o[j];
				o[j] = t;
			}
	for (int k = 0; k + 1 < 4; k++) {
		int i = o[k], j = o[k + 1];
		double f, lo, hi;
		if (x < e->x[i] || x > e->x[j])
			continue;
		f = e->x[j] > e->x[i] ? (x - e->x[i]) / (e->x[j] - e->x[i]) : 0;
		lo = e->lo[i] + f * (e->lo[j] - e->lo[i]);
		hi = e->hi[i] + f * (e->hi[j] - e->hi[i]);
		return y >= lo - 1e-6 && y <= hi + 1e-6;
	}
	return 0;
}

/* Rule 5: the hull holds one step; the intersection, where P3 applies, a change of
 * rate; and it is as narrow as that lets it be. */
static void rule5_envelope(void **state)
{
	double len = 26e7, a = RATE, b = RATE * (1 + 20 * PPM);
	struct fts__band bd = { a * (1 - 1 * PPM), b * (1 + 1 * PPM), 0 };
	struct fts__env hull, isect;
	struct fts__ival l = ival_at_rate(0, len), r = ival_at_rate(20, len), self;
	(void)state;

	/* a change of rate at 30 % of the interval: P3 applies, no step */
	{
		struct fts__pt p0 = pt(0, 0, 0), p1 = pt(len, 0, floor(path(len, a, 0.3 * len, b, 0, 2 * len)));
		self = fts__estimate_ival_of(&p0, &p1);
		assert_true(fts__estimate_rate_change(&self, &l, &r, 1e-6));
		isect = fts__estimate_envelope(&p0, &p1, &bd, 0);
		hull = fts__estimate_envelope(&p0, &p1, &bd, 1);
		for (double x = 0; x <= len; x += len / 64) {
			assert_true(inside(&isect, x, path(x, a, 0.3 * len, b, 0, 2 * len)));
			assert_true(inside(&hull, x, path(x, a, 0.3 * len, b, 0, 2 * len)));
		}
		/* the intersection is the narrower: at most a third of the hull here */
		assert_true(fts__estimate_env_dist(&isect, 0, 0, self.rate) * 3 <
			    fts__estimate_env_dist(&hull, 0, 0, self.rate));
	}
	/* a step of 40 us at 60 %: the sides agree, P3 does not apply, the hull holds it */
	{
		struct fts__pt p0 = pt(0, 0, 0), p1 = pt(len, 0, floor(path(len, a, len, a, 40000, 0.6 * len)));
		struct fts__band ba = { a * (1 - PPM), a * (1 + PPM), 0 };
		self = fts__estimate_ival_of(&p0, &p1);
		assert_false(fts__estimate_rate_change(&self, &l, &l, 1e-6));
		hull = fts__estimate_envelope(&p0, &p1, &ba, 1);
		for (double x = 0; x <= len; x += len / 64)
			assert_true(inside(&hull, x, path(x, a, len, a, 40000, 0.6 * len)));
		/* no path without a step joins the samples: asked for the intersection, the
		 * rule gives the hull */
		isect = fts__estimate_envelope(&p0, &p1, &ba, 0);
		for (int i = 0; i < 4; i++)
			assert_true(isect.hi[i] - isect.lo[i] >= 0);
		assert_true(fabs(fts__estimate_env_dist(&isect, 0, 0, a) - fts__estimate_env_dist(&hull, 0, 0, a)) < 1e-6);
	}
	/* the sides disagree, but the interval's own rate is not between them: not a
	 * change of rate P3 speaks of */
	self = ival_at_rate(40, len);
	assert_false(fts__estimate_rate_change(&self, &l, &r, 1e-6));
}

/* Truth of a clock whose kernel reckons rate b from t1 but publishes it at t2: rate a
 * until t2, then the line of b from t1 (the kernel's lag, P3). */
static double lag_path(double x, double a, double t1, double b, double t2)
{
	return x < t2 ? a * x : a * t1 + b * (x - t1);
}

/* Rule 5, the kernel's lag: a rate change whose readers saw it late (ADJ_TICK +1 %
 * published 100 us after it was reckoned, as the fault lab's guest showed: the jump
 * inside the interval, or the reckoning before its earlier sample) lies outside the
 * intersection of the cones, and within the intersection widened by the lag; faster
 * or slower after, and so is a lag of up to FTS__LAG_NS. The widening is no more than
 * the change over that lag, plus rounding. */
static void rule5_lag(void **state)
{
	double len = 26e7, a = RATE, lag_ticks = FTS__LAG_NS / RATE;   /* 2.6 M */
	(void)state;

	for (int sign = -1; sign <= 1; sign += 2) {
		double b = RATE * (1 + sign * 10000 * PPM);
		struct fts__band bd = { fmin(a, b) * (1 - PPM), fmax(a, b) * (1 + PPM), 0 };
		/* reckoned at 60 %, published 100 us or FTS__LAG_NS later; or reckoned 10 us
		 * before the interval began, published 10 us into it */
		double t1s[3] = { 0.6 * len, 0.6 * len, -2.6e4 }, t2s[3] = { 0.6 * len + 2.6e5,
			0.6 * len + lag_ticks, 2.6e4 };

		for (int c = 0; c < 3; c++) {
			double t1 = t1s[c], t2 = t2s[c];
			struct fts__pt p0 = pt(0, 0, 0), p1 = pt(len, 0, floor(lag_path(len, a, t1, b, t2)));
			struct fts__ival l = ival_at_rate(0, len), r = ival_at_rate(sign * 10000, len);
			struct fts__ival self = fts__estimate_ival_of(&p0, &p1);
			struct fts__env isect;
			struct fts__env lag;
			int missed = 0;

			bd.lag = 0;
			isect = fts__estimate_envelope(&p0, &p1, &bd, 0);
			bd.lag = fts__estimate_lag(&self, &l, &r, 1e-6);
			lag = fts__estimate_envelope(&p0, &p1, &bd, 0);

			assert_true(fts__estimate_rate_change(&self, &l, &r, 1e-6));
			for (double x = 0; x <= len; x += len / 4096) {
				double y = lag_path(x, a, t1, b, t2);
				assert_true(inside(&lag, x, y));
				missed += !inside(&isect, x, y);
			}
			assert_true(missed > 0);   /* the intersection alone does not hold it */
			assert_true(bd.lag > 0);
			/* a change at the interval's end (its own rate the left side's): none
			 * inside, none of its lag */
			assert_true(fts__estimate_lag(&l, &l, &r, 1e-6) == 0);
			for (int i = 0; i < 4; i++)
				assert_true(lag.hi[i] - isect.hi[i] <=
					    (fabs(b - a) + 3 * PPM * RATE) * (FTS__LAG_NS / fmin(a, b)));
		}
	}
}

/* Rule 6: the slopes that pass every sample within its uncertainty; none: refused. */
static void rule6_fit(void **state)
{
	struct fts__fit f;
	(void)state;
	fts__estimate_fit_start(&f, 0, 0);
	assert_true(fts__estimate_fit_add(&f, 100, 99, 101));
	assert_true(fabs(fts__estimate_fit_slope(&f) - 1) < 1e-12);
	assert_true(fts__estimate_fit_add(&f, 200, 200, 206));      /* narrows to [1, 1.01] */
	assert_true(f.lo >= 1 - 1e-12 && f.hi <= 1.01 + 1e-12);
	assert_false(fts__estimate_fit_add(&f, 300, 310, 320));     /* 1.033.. to 1.066..: none */
	assert_true(f.lo >= 1 - 1e-12 && f.hi <= 1.01 + 1e-12 && f.n == 2);   /* unchanged */
	/* a wide sample hardly constrains */
	assert_true(fts__estimate_fit_add(&f, 300, 0, 1000));
	assert_true(f.lo >= 1 - 1e-12 && f.hi <= 1.01 + 1e-12);
}

/* Rule 7: a step's line runs through the middles of its envelope. */
static void rule7_step_line(void **state)
{
	struct fts__env e = { { 0, 10, 20, 100 }, { -5, 0, 0, 190 }, { 5, 0, 0, 210 } };
	double y0, s;
	(void)state;
	fts__estimate_step_line(&e, &y0, &s);
	assert_true(fabs(y0) < 1e-12 && fabs(s - 2) < 1e-12);
}

/* Rule 8: the distance from a line to the envelope, at its farthest point. */
static void rule8_bound(void **state)
{
	struct fts__env e = { { 0, 30, 60, 100 }, { -5, 20, 50, 95 }, { 5, 40, 70, 120 } };
	(void)state;
	/* the line y = x: 5 at 0, 10 at 30 and 60, 20 at 100 (above it) */
	assert_true(fabs(fts__estimate_env_dist(&e, 0, 0, 1) - 20) < 1e-12);
	/* the line y = x + 30, above the envelope: 35, 40, 40, 35 from its floor */
	assert_true(fabs(fts__estimate_env_dist(&e, 0, 30, 1) - 40) < 1e-12);
}

/* Rule 8's rounding: the line published in fixed point (an integer ns at its key, a
 * multiplier and a shift, the result rounded to a ns) stays within what its bound adds
 * to the bound worked out in doubles, over the whole segment, for lines of every slope,
 * any fraction of a ns at the key and bounds of any fraction of a ns. */
static void rule8_fixed_point(void **state)
{
	static const struct fts_calib own = { .flags_ok = FTS__SEG_STEP | FTS__SEG_FAST };
	struct sim r;
	double worst = 0;
	(void)state;
	sim_init(&r, 0, 0, 1, 11);
	for (int i = 0; i < 20000; i++) {
		uint64_t span = 1 + sim_uniform(&r, UINT64_C(1) << (1 + i % 40));
		double s = ldexp((double)sim_uniform(&r, 1u << 30) + 1, -30 + (int)(i % 7) - 3);
		double y0 = (double)sim_uniform(&r, 1000000) + (i % 3 ? (double)sim_uniform(&r, 1024) / 1024 : 0.5);
		double err0 = (double)sim_uniform(&r, 100000) / 1000;
		uint64_t key = sim_uniform(&r, UINT64_C(1) << 50);
		struct fts__rec rec;
		struct fts__line l;

		struct fts__seg_line sl = { .key = key, .end = key + span, .y0 = y0, .s = s,
					    .err = err0 };
		fts__estimate_rule8_rec(&sl, &rec);
		l = (struct fts__line){ .c0 = key, .c1 = key + span };
		fts__rec_load(&own, &rec, &l);
		for (int k = 0; k < 3; k++) {
			uint64_t x = key + (k == 0 ? 0 : k == 1 ? span : sim_uniform(&r, span));
			int64_t ns = 0, err = 0;
			double want = y0 + s * (double)(x - key), miss;
			assert_int_equal(fts__line_convert(&l, 0, x, &ns, &err), 0);
			miss = fabs((double)ns - want);
			if (miss > (double)err - err0) {
				print_message("slope %.9g, span %llu, y0 %.4f: %.3f ns off the line, "
					      "bound %lld for %.3f\n", s, (unsigned long long)span, y0,
					      miss, (long long)err, err0);
				fail();
			}
			worst = fmax(worst, miss);
		}
	}
	print_message("20000 lines: the fixed point at most %.3f ns off the doubles' line\n", worst);
	sim_free(&r);
}

/* Rule 9, the function: a line carried on from a point at a band's middle rate covers
 * every line from that point at a rate inside the band, at any distance either way,
 * for bands of every width and position. */
static void rule9_end_line(void **state)
{
	static const struct fts_calib own = { .flags_ok = FTS__SEG_STEP | FTS__SEG_FAST };
	struct sim r;
	(void)state;
	sim_init(&r, 0, 0, 1, 19);
	for (int i = 0; i < 20000; i++) {
		double mid = ldexp((double)sim_uniform(&r, 1u << 30) + 1, -30 + (int)(i % 5) - 2);
		double half = mid * (double)sim_uniform(&r, 1000) * 1e-6 * (i % 4 ? 1 : 100);
		struct fts__band bd = { .lo = mid - half, .hi = mid + half };
		double y = (double)sim_uniform(&r, 1000) / 7, err = (double)sim_uniform(&r, 500);
		uint64_t key = (UINT64_C(1) << 40) + sim_uniform(&r, UINT64_C(1) << 40);
		int64_t oy = (int64_t)sim_uniform(&r, UINT64_C(1) << 60), grow, ns = 0, e = 0;
		struct fts__rec rec;
		struct fts__line l;

		fts__estimate_rule9_end(key, oy, y, err, &bd, &rec, &grow);
		l = (struct fts__line){ .c0 = key, .c1 = key };
		fts__rec_load(&own, &rec, &l);
		l.grow = grow;
		for (int k = 0; k < 4; k++) {
			uint64_t d = sim_uniform(&r, UINT64_C(1) << (10 + 6 * k));
			int dir = k % 2 ? -1 : 1;
			uint64_t x = dir > 0 ? key + d : key - d;
			for (int side = 0; side < 3; side++) {
				double rate = side == 0 ? bd.lo : side == 1 ? bd.hi : mid;
				long double truth = (long double)oy + y + dir * rate * (long double)d;
				assert_int_equal(fts__line_convert(&l, dir, x, &ns, &e), 0);
				if (fabsl((long double)ns - truth) > (long double)e + 1) {
					print_message("band %.12g..%.12g, %d ticks %s: off by %.3Lf, bound "
						      "%lld\n", bd.lo, bd.hi, (int)d, dir > 0 ? "after" : "before",
						      fabsl((long double)ns - truth), (long long)e);
					fail();
				}
			}
		}
	}
	sim_free(&r);
}

/* Rule 10, the function: the merged segment covers, at every point, the whole interval
 * that either segment covered there (its line +- its bound), for pairs of every slope,
 * offset and bound. */
static void rule10_merge_covers(void **state)
{
	static const struct fts_calib own = { .flags_ok = FTS__SEG_STEP | FTS__SEG_FAST };
	struct sim r;
	(void)state;
	sim_init(&r, 0, 0, 1, 23);
	for (int i = 0; i < 20000; i++) {
		double s = ldexp((double)sim_uniform(&r, 1u << 30) + 1, -30 - (int)(i % 4));
		uint64_t ka = sim_uniform(&r, UINT64_C(1) << 50);
		uint64_t kb = ka + 1 + sim_uniform(&r, UINT64_C(1) << (8 + i % 30));
		uint64_t end = kb + 1 + sim_uniform(&r, UINT64_C(1) << (8 + i % 30));
		struct fts__seg_line la = { .key = ka, .end = kb, .y0 = (double)sim_uniform(&r, 1000),
					    .s = s, .err = (double)sim_uniform(&r, 300) };
		struct fts__seg_line lb = la, m;
		struct fts__rec a, b, rec;
		struct fts__line l[3];

		/* b continues a, off by a little in offset and rate */
		lb.key = kb;
		lb.end = end;
		lb.y0 = la.y0 + s * (double)(kb - ka) + (double)sim_uniform(&r, 200) - 100;
		lb.s = s * (1 + ((double)sim_uniform(&r, 2000) - 1000) * 1e-9);
		lb.err = (double)sim_uniform(&r, 300);
		fts__estimate_rule8_rec(&la, &a);
		fts__estimate_rule8_rec(&lb, &b);
		fts__estimate_rule10_merge(ka, &a, kb, &b, end, &m);
		fts__estimate_rule8_rec(&m, &rec);
		l[0] = (struct fts__line){ .c0 = ka, .c1 = kb };
		l[1] = (struct fts__line){ .c0 = kb, .c1 = end };
		l[2] = (struct fts__line){ .c0 = ka, .c1 = end };
		fts__rec_load(&own, &a, &l[0]);
		fts__rec_load(&own, &b, &l[1]);
		fts__rec_load(&own, &rec, &l[2]);
		for (int k = 0; k < 5; k++) {
			uint64_t x = k == 0 ? ka : k == 1 ? kb - 1 : k == 2 ? kb : k == 3 ? end :
				     ka + sim_uniform(&r, end - ka);
			const struct fts__line *part = x < kb ? &l[0] : &l[1];
			int64_t pn = 0, pe = 0, mn = 0, me = 0;
			assert_int_equal(fts__line_convert(part, 0, x, &pn, &pe), 0);
			assert_int_equal(fts__line_convert(&l[2], 0, x, &mn, &me), 0);
			if (pn - pe < mn - me || pn + pe > mn + me) {
				print_message("merged %llu + %llu ticks: at %llu the part covers %lld +- %lld, "
					      "the merge %lld +- %lld\n", (unsigned long long)(kb - ka),
					      (unsigned long long)(end - kb), (unsigned long long)(x - ka),
					      (long long)pn, (long long)pe, (long long)mn, (long long)me);
				fail();
			}
		}
	}
	sim_free(&r);
}

/* Rule 9: outside the samples the bound grows with the distance, at half the band. */
static void rule9_ends(void **state)
{
	struct fts_calib *c = fts_calib_new();
	int64_t ns, e1, e2, e3;
	(void)state;
	for (int i = 0; i < 20; i++)
		assert_int_equal(fts_calib_add(c, 1000000 + i * 26000000ull, 10000000 * i,
					       1000000 + i * 26000000ull), 0);
	assert_int_equal(fts_calib_convert(c, 1000000 + 20 * 26000000ull, &ns, &e1), 0);
	assert_int_equal(fts_calib_convert(c, 1000000 + 30 * 26000000ull, &ns, &e2), 0);
	assert_int_equal(fts_calib_convert(c, 1000000 + 40 * 26000000ull, &ns, &e3), 0);
	assert_true(e1 < e2 && e2 < e3);
	/* linear in the distance: the same growth for each 10 intervals (1 ns rounding) */
	assert_true(llabs((e3 - e2) - (e2 - e1)) <= 1);
	assert_int_equal(fts_calib_convert(c, 0, &ns, &e1), 0);
	assert_true(ns < 0 || ns < 10000000);
	fts_calib_free(c);
}

/* Rule 10: at the memory limit the merges that widen the bound least go first, over
 * the whole history. A stretch of wobbling rate (a segment per interval, each with its
 * own bound) comes first, then a long steady stretch (segments of 64 intervals, whose
 * neighbours merge almost for free). When the limit is reached, the steady segments
 * merge and the wobbling stretch, older as it is, keeps every segment: its bounds are
 * those of an unlimited history, exactly. Every bound still covers. */
static void rule10_merges_by_cost(void **state)
{
	struct fts_calib_opts o = { .size = sizeof(o), .max_samples = 64 };
	struct fts_calib *c = fts_calib_new_opts(&o), *full = fts_calib_new();
	struct sim s;
	uint64_t t = 1000, wob_end = 0;
	int64_t ns, err, fns, ferr;
	size_t covered = 0, probes = 0, wob_same = 0, wob_probes = 0;
	(void)state;

	sim_init(&s, t, 1e18L, RATE, 4);
	for (int i = 0; i < 4000; i++) {
		uint64_t b, a;
		int64_t r;
		if (i < 30)     /* wobble: a new rate at every sample */
			sim_change(&s, t, RATE * (1 + ((i % 4) - 1.5) * 3 * PPM), 0);
		else if (i == 30)
			sim_change(&s, t, RATE, 0);
		if (i == 30)
			wob_end = t;
		sim_sample(&s, t, 20, &b, &r, &a);
		assert_int_equal(fts_calib_add(c, b, r, a), 0);
		assert_int_equal(fts_calib_add(full, b, r, a), 0);
		t += 26000000;
	}
	print_message("4000 samples: %zu knots kept under a limit of 64, %zu unlimited\n",
		      fts_calib_count(c), fts_calib_count(full));
	assert_true(fts_calib_count(c) <= 64);
	assert_true(fts_calib_count(full) > 64);   /* the limit was reached */
	for (uint64_t x = 1000; x < t - 26000000; x += 1300001) {
		int64_t truth = sim_truth(&s, x);
		assert_int_equal(fts_calib_convert(c, x, &ns, &err), 0);
		assert_int_equal(fts_calib_convert(full, x, &fns, &ferr), 0);
		covered += llabs(ns - truth) <= err;
		probes++;
		if (x < wob_end - 26000000) {
			wob_probes++;
			wob_same += ns == fns && err == ferr;
		}
	}
	print_message("%zu of %zu covered; %zu of %zu stamps of the wobbling stretch convert "
		      "as without a limit\n", covered, probes, wob_same, wob_probes);
	assert_int_equal(covered, probes);
	assert_int_equal(wob_same, wob_probes);
	fts_calib_free(c);
	fts_calib_free(full);
	sim_free(&s);
}

/* Rule 11, the bridge: past the end of a history (its tail, forward) and before the
 * start of the next thing known (a clock read, or another history's head, backward),
 * the clock stepped at most once. Both a clock that kept its rate and one that stepped
 * just after the tail are covered; where the two agree, the estimate is the middle of
 * their overlap, so that a wide read cannot pull it. */
static void rule11_bridge(void **state)
{
	/* 1 ns a tick (shift 0, mult 1), the tail at counter 1000 reading 5000 +- 10 ns and
	 * growing by 1 ns per 1000 ticks (shift 10: grow 1 = 1/1024 ns a tick) */
	struct fts__line fwd = { .c0 = 1000, .c1 = 1000, .r0 = 5000, .mult = 1024, .shift = 10,
				 .err = 10, .grow = 1 };
	struct fts__line bwd = fwd;
	int64_t ns, err;
	(void)state;

	/* a read at 101000 that agrees: the middle of the overlap of the two extrapolations
	 * (fwd 55000 +- 58, bwd 55003 +- 53 at 51000), a bound a little wider than the
	 * tail's */
	bwd.c0 = bwd.c1 = 101000;
	bwd.r0 = 105003;
	bwd.err = 5;
	assert_int_equal(fts__bridge(&fwd, &bwd, 51000, &ns, &err), 0);
	assert_int_equal(ns, 55003);
	assert_true(err >= 10 + 50 && err < 100);
	assert_int_equal(fts__bridge(&fwd, &bwd, 101000, &ns, &err), 0);
	assert_int_equal(ns, 105003);  /* at the read, the read */
	/* a read 2 us wide (preempted inside its bracket): it does not pull the estimate
	 * off the tail's line, and the bound still covers all the read allows */
	bwd.err = 1000;
	assert_int_equal(fts__bridge(&fwd, &bwd, 101000, &ns, &err), 0);
	assert_int_equal(ns, 105000);
	assert_true(err >= 1003 && err < 1100);
	bwd.err = 5;
	/* a read showing a step of +1 ms: the truth at x is on either side of it */
	bwd.r0 = 105000 + 1000000;
	assert_int_equal(fts__bridge(&fwd, &bwd, 51000, &ns, &err), 0);
	assert_true(llabs(ns - 55000) <= err);             /* no step before x */
	assert_true(llabs(ns - (55000 + 1000000)) <= err); /* the step before x */
	assert_true(err < 1000000 / 2 + 200);
	/* a step back */
	bwd.r0 = 105000 - 1000000;
	assert_int_equal(fts__bridge(&fwd, &bwd, 99000, &ns, &err), 0);
	assert_true(llabs(ns - 103000) <= err && llabs(ns - (103000 - 1000000)) <= err);
	/* err may be NULL */
	assert_int_equal(fts__bridge(&fwd, &bwd, 99000, &ns, NULL), 0);
}

/* Rule 6, where a run ends: after FTS__RUN_MAX intervals; before an interval whose own
 * scale and the run's bound differ by more than twice, FTS__RUN_SLACK_NS apart; before
 * one that ends too far from the run's start for doubles. Each threshold from both
 * sides. */
static void rule6_run_ends(void **state)
{
	const double up = nextafter(0x1p40, INFINITY), upx = nextafter(0x1p44, INFINITY);
	(void)state;
	assert_false(fts__estimate_rule6_run_ends(FTS__RUN_MAX - 1, 10, 10, 100, 100));
	assert_true(fts__estimate_rule6_run_ends(FTS__RUN_MAX, 10, 10, 100, 100));
	assert_int_equal(FTS__RUN_MAX, 64);   /* the rule's text says 64 */
	/* the interval wider than the run: up to twice its bound and 20 ns */
	assert_false(fts__estimate_rule6_run_ends(5, 10, 2 * 10 + FTS__RUN_SLACK_NS, 100, 100));
	assert_true(fts__estimate_rule6_run_ends(5, 10, nextafter(2 * 10 + FTS__RUN_SLACK_NS, 1e9), 100, 100));
	/* the run wider than the interval */
	assert_false(fts__estimate_rule6_run_ends(5, 2 * 10 + FTS__RUN_SLACK_NS, 10, 100, 100));
	assert_true(fts__estimate_rule6_run_ends(5, nextafter(2 * 10 + FTS__RUN_SLACK_NS, 1e9), 10, 100, 100));
	/* a run of exact intervals takes one of 20 ns, not one of 20.5 */
	assert_false(fts__estimate_rule6_run_ends(5, 0, FTS__RUN_SLACK_NS, 100, 100));
	assert_true(fts__estimate_rule6_run_ends(5, 0, FTS__RUN_SLACK_NS + 0.5, 100, 100));
	/* far from the start, either way */
	assert_false(fts__estimate_rule6_run_ends(5, 10, 10, 100, 0x1p40));
	assert_false(fts__estimate_rule6_run_ends(5, 10, 10, 100, -0x1p40));
	assert_true(fts__estimate_rule6_run_ends(5, 10, 10, 100, up));
	assert_true(fts__estimate_rule6_run_ends(5, 10, 10, 100, -up));
	assert_false(fts__estimate_rule6_run_ends(5, 10, 10, 0x1p44, 100));
	assert_true(fts__estimate_rule6_run_ends(5, 10, 10, upx, 100));
	assert_true(fts__estimate_rule6_run_ends(5, 10, 10, -upx, 100));
}

/* Rule 10, when: not while the add fits; then down to 3/4 of the room (a quarter
 * free), less where the add needs more, and at least one segment. */
static void rule10_keep(void **state)
{
	(void)state;
	assert_int_equal(fts__estimate_rule10_keep(56, 8, 64), 0);
	assert_int_equal(fts__estimate_rule10_keep(57, 8, 64), 48);
	assert_int_equal(fts__estimate_rule10_keep(64, 8, 64), 48);
	assert_int_equal(fts__estimate_rule10_keep(92, 8, 100), 0);
	assert_int_equal(fts__estimate_rule10_keep(93, 8, 100), 75);
	/* a small room: what the add needs decides (16 - 8, not 12) */
	assert_int_equal(fts__estimate_rule10_keep(8, 8, 16), 0);
	assert_int_equal(fts__estimate_rule10_keep(9, 8, 16), 8);
	assert_int_equal(fts__estimate_rule10_keep(12, 5, 16), 11);
	assert_int_equal(fts__estimate_rule10_keep(13, 4, 16), 12);
	/* no room for the add at all: one segment stays */
	assert_int_equal(fts__estimate_rule10_keep(0, 8, 8), 0);
	assert_int_equal(fts__estimate_rule10_keep(1, 8, 8), 1);
	assert_int_equal(fts__estimate_rule10_keep(5, 9, 8), 1);
}

/* n segments of 1000 ticks at 1 ns a tick, bound 5 ns; off[i] ns added to segment i's
 * line from i on (a jump at its start); step[i]: it holds one. */
static void segments(size_t n, const double *off, const int *step, uint64_t *key,
		     struct fts__rec *rec)
{
	double y = 0;
	for (size_t i = 0; i < n; i++) {
		struct fts__seg_line o = { .key = 1000 * i, .end = 1000 * (i + 1), .s = 1, .err = 5,
					   .step = step[i] };
		y += off[i];
		o.y0 = y + 1000.0 * (double)i;
		fts__estimate_rule8_rec(&o, &rec[i]);
		key[i] = o.key;
	}
	key[n] = 1000 * n;
}

/* Rule 10, which: the pairs whose merging widens the bound least, over the whole list,
 * no segment twice, never across a step; none when only steps are left. */
static void rule10_pick(void **state)
{
	/* jumps between 0|1: 0 ns, 1|2: 50, 2|3: 10, 3|4: 200, 4|5: 20 */
	const double off[6] = { 0, 0, 50, 10, 200, 20 };
	int step[6] = { 0 };
	uint64_t key[7];
	struct fts__rec rec[6];
	struct fts__merge_cand cand[6];
	unsigned char taken[6];
	(void)state;

	segments(6, off, step, key, rec);
	assert_int_equal(fts__estimate_rule10_pick(key, rec, 6, 1, cand, taken), 1);
	assert_memory_equal(taken, ((unsigned char[]){ 1, 2, 0, 0, 0, 0 }), 6);
	assert_int_equal(fts__estimate_rule10_pick(key, rec, 6, 2, cand, taken), 2);
	assert_memory_equal(taken, ((unsigned char[]){ 1, 2, 1, 2, 0, 0 }), 6);
	assert_int_equal(fts__estimate_rule10_pick(key, rec, 6, 3, cand, taken), 3);
	assert_memory_equal(taken, ((unsigned char[]){ 1, 2, 1, 2, 1, 2 }), 6);
	/* 1|2 and 3|4 would take a segment twice: three pairs at most */
	assert_int_equal(fts__estimate_rule10_pick(key, rec, 6, 4, cand, taken), 3);
	/* a step in segment 2: not 1|2 nor 2|3; the next cheapest, 4|5, then 3|4 no more */
	step[2] = 1;
	segments(6, off, step, key, rec);
	assert_int_equal(fts__estimate_rule10_pick(key, rec, 6, 2, cand, taken), 2);
	assert_memory_equal(taken, ((unsigned char[]){ 1, 2, 0, 0, 1, 2 }), 6);
	assert_int_equal(fts__estimate_rule10_pick(key, rec, 6, 3, cand, taken), 2);
	/* only steps: nothing merges */
	for (int i = 0; i < 6; i++)
		step[i] = i % 2;
	segments(6, off, step, key, rec);
	assert_int_equal(fts__estimate_rule10_pick(key, rec, 6, 1, cand, taken), 0);
	assert_memory_equal(taken, ((unsigned char[]){ 0, 0, 0, 0, 0, 0 }), 6);
}

/* Rule 11, the join: where the two answers meet (ends touching too), the middle of
 * their overlap; where they do not, of their hull; the bound covers the hull. */
static void rule11_join(void **state)
{
	int64_t ns, err;
	(void)state;
	/* [90, 110] and [110, 130] meet at 110 */
	assert_int_equal(fts__estimate_rule11_join(100, 10, 120, 10, &ns, &err), 0);
	assert_int_equal(ns, 110);
	assert_int_equal(err, 20);
	assert_int_equal(fts__estimate_rule11_join(120, 10, 100, 10, &ns, &err), 0);
	assert_int_equal(ns, 110);
	/* [90, 110] and [111, 131] do not: the hull [90, 131] */
	assert_int_equal(fts__estimate_rule11_join(100, 10, 121, 10, &ns, &err), 0);
	assert_int_equal(ns, 110);
	assert_int_equal(err, 21);
	/* a narrow answer inside a wide one decides: [995, 1005] in [0, 2000] */
	assert_int_equal(fts__estimate_rule11_join(1000, 1000, 1000, 5, &ns, &err), 0);
	assert_int_equal(ns, 1000);
	assert_int_equal(err, 1000);
	assert_int_equal(fts__estimate_rule11_join(400, 400, 790, 5, &ns, NULL), 0);
	assert_int_equal(ns, 790);
	/* a bound past 64 bits: [-2^63 + 1, 2^63 - 1] and [-2^63, -2^63] */
	assert_int_equal(fts__estimate_rule11_join(0, INT64_MAX, INT64_MIN, 0, &ns, &err), -ERANGE);
	assert_int_equal(fts__estimate_rule11_join(0, INT64_MAX, 0, 0, &ns, &err), 0);
	assert_int_equal(err, INT64_MAX);
}

/* Rule 13: which clocks each event moves against the counter. */
static void rule13_moved(void **state)
{
	const uint32_t rt = 1u << FTS__CLK_REALTIME, tai = 1u << FTS__CLK_TAI,
		       boot = 1u << FTS__CLK_BOOTTIME, mono = 1u << FTS__CLK_MONOTONIC,
		       raw = 1u << FTS__CLK_RAW;
	(void)state;
	assert_int_equal(fts__estimate_rule13_moved(0, 0, 0, 0), 0);
	assert_int_equal(fts__estimate_rule13_moved(1, 0, 0, 0), rt);              /* a leap second */
	assert_int_equal(fts__estimate_rule13_moved(1, 1, 0, 0), rt | tai);        /* a set */
	assert_int_equal(fts__estimate_rule13_moved(0, 0, 1, 0), rt | tai | boot); /* a sleep */
	assert_int_equal(fts__estimate_rule13_moved(0, 0, 1, 1), rt | tai | boot | mono | raw);
	assert_int_equal(fts__estimate_rule13_moved(1, 1, 1, 1), rt | tai | boot | mono | raw);
}

/* Rule 14: a read below the newest kept starts an era; one FTS__OBS_GAP_NS or more after
 * it joins the history, one closer only bridges. */
static void rule14_obs(void **state)
{
	(void)state;
	assert_int_equal(fts__estimate_rule14_obs(0, 0, 5000, 0), FTS__OBS_NEW_ERA);
	assert_int_equal(fts__estimate_rule14_obs(1, 5000, 4999, FTS__OBS_GAP_NS), FTS__OBS_NEW_ERA);
	assert_int_equal(fts__estimate_rule14_obs(1, 5000, 5000, FTS__OBS_GAP_NS - 1), FTS__OBS_BRIDGE);
	assert_int_equal(fts__estimate_rule14_obs(1, 5000, 5000, FTS__OBS_GAP_NS), FTS__OBS_JOIN);
	assert_int_equal(fts__estimate_rule14_obs(1, 5000, 9000, 0), FTS__OBS_BRIDGE);
}

/* Rule 14: an era holds the readings from its first less the step back's interval
 * before it, up to its top. */
static void rule14_may_hold(void **state)
{
	(void)state;
	assert_false(fts__estimate_rule14_may_hold(899, 1000, 100, 5000));
	assert_true(fts__estimate_rule14_may_hold(900, 1000, 100, 5000));
	assert_true(fts__estimate_rule14_may_hold(5000, 1000, 100, 5000));
	assert_false(fts__estimate_rule14_may_hold(5001, 1000, 100, 5000));
	assert_false(fts__estimate_rule14_may_hold(999, 1000, 0, 5000));
	assert_true(fts__estimate_rule14_may_hold(1000, 1000, 0, 5000));
	/* the first era: every reading before it too (rule 9) */
	assert_true(fts__estimate_rule14_may_hold(0, 1000, -1, 5000));
	assert_false(fts__estimate_rule14_may_hold(5001, 1000, -1, 5000));
}

/* Rule 14, an era of one read: carried from its bracket's middle at 1:1 give or take
 * 10.05 % (FTS__ONE_OBS_PPM: a ns of growth from the 10th ns on), plus half the
 * bracket and 1 ns. */
static void rule14_one_obs(void **state)
{
	__int128 lo, hi;
	(void)state;
	/* the bracket [1000, 1010]: its middle 1005, half of it 5, and the 1 ns: 6 */
	fts__estimate_rule14_one_obs(1000, 1010, 5000, 1005, &lo, &hi);
	assert_true(lo == 4994 && hi == 5006);
	fts__estimate_rule14_one_obs(1000, 1010, 5000, 1005 + 9, &lo, &hi);
	assert_true(lo == 5009 - 6 && hi == 5009 + 6);
	fts__estimate_rule14_one_obs(1000, 1010, 5000, 1005 + 10, &lo, &hi);
	assert_true(lo == 5010 - 7 && hi == 5010 + 7);
	fts__estimate_rule14_one_obs(1000, 1010, 5000, 1005 - 10, &lo, &hi);
	assert_true(lo == 4990 - 7 && hi == 4990 + 7);
	/* a second away: 100.5 ms either way */
	fts__estimate_rule14_one_obs(1000, 1010, 5000, 1005 + 1000000000, &lo, &hi);
	assert_true(lo == 1000005000 - 100500006 && hi == 1000005000 + 100500006);
	/* far apart, without overflow */
	fts__estimate_rule14_one_obs(UINT64_MAX - 10, UINT64_MAX, INT64_MAX, 0, &lo, &hi);
	assert_true(lo < hi && hi < (__int128)INT64_MAX);
}

/* Rule 15, a history: a counter value is within reach no further before its first or
 * past its newest sample than the history is long, or 1 s (FTS__REACH_FLOOR_NS) where
 * that is more. */
static void rule15_reach_history(void **state)
{
	const int64_t far = FTS__REACH_FLOOR_NS + 1;
	(void)state;
	/* a history of 1000..3000 reaches 2000 either way, however far that is in ns */
	assert_true(fts__estimate_reach_history(1000, 3000, 2000, far));
	assert_true(fts__estimate_reach_history(1000, 3000, 5000, far));
	assert_false(fts__estimate_reach_history(1000, 3000, 5001, far));
	assert_true(fts__estimate_reach_history(3000, 5000, 1000, far));
	assert_false(fts__estimate_reach_history(3000, 5000, 999, far));
	/* beyond its span, as far as the floor */
	assert_true(fts__estimate_reach_history(3000, 5000, 999, FTS__REACH_FLOOR_NS));
	assert_true(fts__estimate_reach_history(1000, 3000, 5001, FTS__REACH_FLOOR_NS));
	/* one sample's worth, and the ends of the counter, without overflow */
	assert_true(fts__estimate_reach_history(7, 7, 7, far));
	assert_false(fts__estimate_reach_history(7, 7, 8, far));
	assert_false(fts__estimate_reach_history(UINT64_MAX - 10, UINT64_MAX - 5, 0, far));
	assert_false(fts__estimate_reach_history(5, 10, UINT64_MAX, INT64_MAX));
	assert_true(fts__estimate_reach_history(0, UINT64_MAX, UINT64_MAX, far));
	assert_true(fts__estimate_reach_history(1, UINT64_MAX, 0, far));
}

/* Rule 15, the live process: a stamp whose CLOCK_MONOTONIC_RAW reading is certainly
 * negative is from before the boot; one past the counter read the conversion takes by
 * more than 1 ms (FTS__REACH_AHEAD_NS) and the offsets between CPUs is from the future. */
static void rule15_reach_live(void **state)
{
	(void)state;
	/* before the boot: only where even the bound's top is negative */
	assert_false(fts__estimate_reach_live(-1000, 999, 0, 0));
	assert_true(fts__estimate_reach_live(-1000, 1000, 0, 0));
	assert_true(fts__estimate_reach_live(0, 0, 0, 0));
	assert_false(fts__estimate_reach_live(INT64_MIN, 0, 0, 0));
	assert_true(fts__estimate_reach_live(INT64_MIN + 1, INT64_MAX, 0, 0));
	/* the future: up to 1 ms and the skew past the read */
	assert_true(fts__estimate_reach_live(5, 0, FTS__REACH_AHEAD_NS, 0));
	assert_false(fts__estimate_reach_live(5, 0, FTS__REACH_AHEAD_NS + 1, 0));
	assert_true(fts__estimate_reach_live(5, 0, FTS__REACH_AHEAD_NS + 700, 700));
	assert_false(fts__estimate_reach_live(5, 0, FTS__REACH_AHEAD_NS + 701, 700));
	assert_false(fts__estimate_reach_live(5, 0, FTS__REACH_AHEAD_NS + 1, -1));   /* skew unknown */
	assert_false(fts__estimate_reach_live(5, 0, INT64_MAX, 0));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rule1_sample_uncertainty),
		cmocka_unit_test(rule1_resolution),
		cmocka_unit_test(rule2_interval_rate),
		cmocka_unit_test(rule3_step_verdict),
		cmocka_unit_test(rule4_band),
		cmocka_unit_test(rule5_envelope),
		cmocka_unit_test(rule5_lag),
		cmocka_unit_test(rule6_fit),
		cmocka_unit_test(rule6_run_ends),
		cmocka_unit_test(rule7_step_line),
		cmocka_unit_test(rule8_bound),
		cmocka_unit_test(rule8_fixed_point),
		cmocka_unit_test(rule9_ends),
		cmocka_unit_test(rule9_end_line),
		cmocka_unit_test(rule10_merge_covers),
		cmocka_unit_test(rule10_merges_by_cost),
		cmocka_unit_test(rule10_keep),
		cmocka_unit_test(rule10_pick),
		cmocka_unit_test(rule11_bridge),
		cmocka_unit_test(rule11_join),
		cmocka_unit_test(rule13_moved),
		cmocka_unit_test(rule14_obs),
		cmocka_unit_test(rule14_may_hold),
		cmocka_unit_test(rule14_one_obs),
		cmocka_unit_test(rule15_reach_history),
		cmocka_unit_test(rule15_reach_live),
	};
	return fts_test_run(tests, argc, argv);
}
