/* estimate.c - the rules of the history's model, one function each (see estimate.h
 * and faststamp.h, "THE MODEL"). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clk.h"      /* enum fts__clk */
#include "estimate.h"
#include "history.h"
#include "invariant.h"

/* fmax and fmin without their NaN rules, inline: nothing here is NaN. */
static inline double max2(double a, double b) { return a > b ? a : b; }
static inline double min2(double a, double b) { return a < b ? a : b; }

/* Rule 1. The clock read r at some counter value within h ticks of x: at x itself it
 * read within h ticks' worth of r, and a ns more for its whole-ns reading. */
double fts__estimate_pt_uncertainty(const struct fts__pt *p, double rate_hi)
{
	return p->h * rate_hi + 1;
}

/* Rule 2. The rate between midpoints, and how far the true mean rate between the
 * actual reads may be from it: the reads lay up to ha + hb ticks nearer or further
 * apart, and the readings were rounded down. */
struct fts__ival fts__estimate_ival_of(const struct fts__pt *a, const struct fts__pt *b)
{
	double len = fts__estimate_d128(b->xi - a->xi), w = a->h + b->h, dr = fts__estimate_d128(b->ri - a->ri);
	struct fts__ival v = { .rate = dr / len, .step = b->step };

	if (len > w)
		v.noise = (fabs(v.rate) * w + 2) / (len - w);
	else    /* the brackets overlap: the interval says nothing of the rate */
		v.noise = fabs(v.rate) + 2;
	return v;
}

/* Rule 3. A step makes an interval's rate an outlier: beyond the rates of its
 * neighbours on both sides by more than any slew could account for (FTS__STEP_PPM of
 * the rate, plus both rates' noise). A rate change, however large, leaves the interval
 * holding it between its neighbours, so slews are never steps. Only a neighbour that
 * knows its rate to better than half that margin has a say, and it takes both sides to
 * tell which of two intervals stepped. A source that saw the step says so; a clock
 * that stood still or ran backwards against the counter stepped. */
static int informative(const struct fts__ival *n)
{
	return n && n->noise < fabs(n->rate) * FTS__STEP_PPM * 0.5e-6;
}

int fts__estimate_is_step(const struct fts__ival *self, const struct fts__ival *left,
			  const struct fts__ival *right)
{
	const struct fts__ival *n[2] = { left, right };
	int above = 1, below = 1;

	if (self->step || self->rate <= 0)
		return 1;
	if (!informative(left) || !informative(right))
		return 0;
	for (int i = 0; i < 2; i++) {
		double margin = fabs(n[i]->rate) * FTS__STEP_PPM * 1e-6 + self->noise + n[i]->noise;
		above = above && self->rate > n[i]->rate + margin;
		below = below && self->rate < n[i]->rate - margin;
	}
	return above || below;
}

/* Rule 4, where the neighbours' rates come from. The nearest interval on a side that
 * holds no step (a step's interval measures the step, not a rate); a short one says
 * little of the rate, so it is extended over the intervals beyond it until it spans
 * half the interval it speaks for. */
int fts__estimate_neighbour(const struct fts__pt *p, const int *step, int n, int k, int dir,
			    struct fts__ival *out)
{
	int j = dir > 0 ? k + 1 : k - 1, hops = 0, end;
	double want = fts__estimate_d128(p[k + 1].xi - p[k].xi) / 2;

	while (j >= 0 && j + 1 < n && step[j] && hops < 1) {
		j += dir;
		hops++;
	}
	if (j < 0 || j + 1 >= n || step[j])
		return 0;
	/* the span: points j .. end (dir > 0) or end .. j + 1 (dir < 0) */
	if (dir > 0) {
		for (end = j + 1; end + 1 < n && end - j < 2 && !step[end] &&
				  fts__estimate_d128(p[end].xi - p[j].xi) < want; end++)
			;
		*out = fts__estimate_ival_of(&p[j], &p[end]);
	} else {
		for (end = j; end > 0 && j + 1 - end < 2 && !step[end - 1] &&
			      fts__estimate_d128(p[j + 1].xi - p[end].xi) < want; end--)
			;
		*out = fts__estimate_ival_of(&p[end], &p[j + 1]);
	}
	out->step = 0;
	return 1;
}

/* Rule 4. Between two samples the clock's rate may change, at unknown points: the
 * rates measured beside the interval (each give or take its noise) bound it, and its
 * own rate unless it holds a step (a step bends it), widened by the tolerance. With
 * nothing beside it, its own rate is all there is, and a step too small for rule 3 may
 * hide in it: the band allows for that. More rates only widen the band. */
struct fts__band fts__estimate_band_of(const struct fts__ival *self, const struct fts__ival *left,
				       const struct fts__ival *right, double tol)
{
	const struct fts__ival *n[3] = { left, right, self->step ? NULL : self };
	struct fts__band b = { INFINITY, -INFINITY, 0 };
	double mid;

	if (!left && !right)
		n[2] = NULL;
	for (int i = 0; i < 3; i++) {
		if (!n[i])
			continue;
		b.lo = min2(b.lo, n[i]->rate - n[i]->noise);
		b.hi = max2(b.hi, n[i]->rate + n[i]->noise);
	}
	if (b.lo > b.hi) {
		double e = self->noise + fabs(self->rate) * FTS__STEP_PPM * 1e-6;
		b.lo = self->rate - e;
		b.hi = self->rate + e;
		if (self->rate <= 0) {   /* a step measures no rate: any up to its size */
			b.lo = 0;
			b.hi = fabs(self->rate) + e;
		}
	}
	mid = (b.lo + b.hi) / 2;
	b.lo -= fabs(mid) * tol;
	b.hi += fabs(mid) * tol;
	if (b.lo < 0)
		b.lo = 0;
	FTS__ASSERT(!(b.lo > b.hi));
	return b;
}

/* Rule 5. Where the rates on the two sides of an interval disagree and its own rate lies
 * between them, the clock changed its rate there: by the premise that events are
 * sparse, that change is the one event there, and the one step that may come with it
 * is the kernel's lag behind its new rate (P3). */
int fts__estimate_rate_change(const struct fts__ival *self, const struct fts__ival *left,
			      const struct fts__ival *right, double tol)
{
	double m = max2(fabs(left->rate), fabs(right->rate)), slack = 2 * tol * m;
	double lo = min2(left->rate, right->rate), hi = max2(left->rate, right->rate);

	/* the sides disagree, and the interval's own rate lies between them, as one
	 * change from one to the other leaves it */
	return hi - lo > left->noise + right->noise + slack &&
	       self->rate >= lo - self->noise - slack && self->rate <= hi + self->noise + slack;
}

/* Rule 5. The change is from the left side's rate to the right side's, each give or
 * take its noise, over FTS__LAG_NS of the counter at the slower. An interval whose own
 * rate is the left side's (within their noise and the tolerance) held no change: a
 * change at its end, whose lag may fall in the next interval, and none here. */
double fts__estimate_lag(const struct fts__ival *self, const struct fts__ival *left,
			 const struct fts__ival *right, double tol)
{
	double slow = min2(fabs(left->rate), fabs(right->rate));

	if (fabs(self->rate - left->rate) <= self->noise + left->noise + 2 * tol * fabs(left->rate))
		return 0;
	if (!(slow > 0))   /* no rate to count the lag in: as long as the history allows */
		return INFINITY;
	return (fabs(right->rate - left->rate) + left->noise + right->noise) * (FTS__LAG_NS / slow);
}

/* Rule 5. If no step happened between a and x, the truth at x lies in the cone forward
 * from a with the band's rates; if none happened between x and b, in the cone back from
 * b. With no step at all, in both: their intersection. With one step at most, in one
 * of the two: their hull. The intersection is widened by the band's lag, the kernel's
 * behind a change of rate inside the interval (0 elsewhere): the kernel reckons a new
 * rate from a counter read and its readers see it only once it is published, reading
 * on at the old rate meanwhile and then jumping to the new line (or, the reckoning
 * before the earlier sample, reading that sample on the old line): their readings lie
 * off the continuous path by the change times the lag, FTS__LAG_NS at most
 * (fts__estimate_lag, in the band). Each cone edge is a line; the edges bend where a
 * forward edge crosses a backward one: the envelope holds the ends and those points. */
struct fts__env fts__estimate_envelope(const struct fts__pt *a, const struct fts__pt *b,
				       const struct fts__band *bd, int may_step)
{
	double len = b->x - a->x;
	double ua = fts__estimate_pt_uncertainty(a, bd->hi), ub = fts__estimate_pt_uncertainty(b, bd->hi);
	double ca = a->r, cb = b->r;
	/* edges as y = y0 + s (x - a->x): forward hi/lo, backward hi/lo */
	double fh0 = ca + ua, fhs = bd->hi, fl0 = ca - ua, fls = bd->lo;
	double bh0 = cb + ub - bd->lo * len, bhs = bd->lo, bl0 = cb - ub - bd->hi * len, bls = bd->hi;
	double xs[4] = { 0, len, 0, len };
	struct fts__env e;

	/* the crossings, where inside */
	if (fhs != bhs) {
		double x = (bh0 - fh0) / (fhs - bhs);
		if (x > 0 && x < len)
			xs[1] = x;
	}
	if (fls != bls) {
		double x = (bl0 - fl0) / (fls - bls);
		if (x > 0 && x < len)
			xs[2] = x;
	}
	for (int i = 0; i < 4; i++) {
		double x = xs[i];
		double fh = fh0 + fhs * x, bh = bh0 + bhs * x, fl = fl0 + fls * x, bl = bl0 + bls * x;
		e.x[i] = a->x + x;
		e.hi[i] = may_step ? max2(fh, bh) : min2(fh, bh) + bd->lag;
		e.lo[i] = may_step ? min2(fl, bl) : max2(fl, bl) - bd->lag;
		/* No room between the cones: no path without a step joins the samples, so
		 * there was one after all. */
		if (e.lo[i] > e.hi[i]) {
			FTS__ASSERT(!may_step);   /* the hull of two cones is never empty */
			return fts__estimate_envelope(a, b, bd, 1);
		}
	}
	return e;
}

/* Rule 8. Each edge of the envelope is straight between its points: the distance from
 * a line to it is largest at one of them. */
double fts__estimate_env_dist(const struct fts__env *e, double x0, double y0, double s)
{
	double d = 0;

	for (int i = 0; i < 4; i++) {
		double y = y0 + s * (e->x[i] - x0);
		d = max2(d, max2(e->hi[i] - y, y - e->lo[i]));
	}
	return d;
}

/* Rule 7. Which side of the step a stamp lies on is unknown: the middle of the two,
 * from one end to the other. */
void fts__estimate_step_line(const struct fts__env *e, double *y0, double *s)
{
	double m0 = (e->lo[0] + e->hi[0]) / 2, m1 = (e->lo[3] + e->hi[3]) / 2;

	*y0 = m0;
	*s = (m1 - m0) / (e->x[3] - e->x[0]);
}

/* Rule 6. The slopes from the start point that pass a sample within its range form an
 * interval; a run keeps the intersection of its samples' intervals. */
void fts__estimate_fit_start(struct fts__fit *f, double x0, double y0)
{
	*f = (struct fts__fit){ .x0 = x0, .y0 = y0, .lo = -INFINITY, .hi = INFINITY };
}

int fts__estimate_fit_add(struct fts__fit *f, double x, double ylo, double yhi)
{
	double dx = x - f->x0, lo, hi;

	if (!(dx > 0))
		return 0;
	lo = max2(f->lo, (ylo - f->y0) / dx);
	hi = min2(f->hi, (yhi - f->y0) / dx);
	if (lo > hi)
		return 0;
	f->lo = lo;
	f->hi = hi;
	f->n++;
	return 1;
}

double fts__estimate_fit_slope(const struct fts__fit *f)
{
	if (!isfinite(f->lo) || !isfinite(f->hi))   /* one side open: no sample yet */
		return isfinite(f->lo) ? f->lo : isfinite(f->hi) ? f->hi : 0;
	return (f->lo + f->hi) / 2;
}

/* Rule 6: a run's line must pass each of its samples within the sample's own
 * uncertainty, and its bound is the farthest of its envelopes: an interval of a much
 * different scale would widen the run's bound (or be held to a bound it cannot keep). */
int fts__estimate_rule6_run_ends(unsigned n, double e_run, double e_iv, double dx, double dy)
{
	return n >= FTS__RUN_MAX || fabs(dy) > FTS__RUN_FAR_NS || fabs(dx) > FTS__RUN_FAR_TICKS ||
	       e_iv > 2 * e_run + FTS__RUN_SLACK_NS || 2 * e_iv + FTS__RUN_SLACK_NS < e_run;
}

/* ---- rules 8-10 in fixed point: what a segment is published as --------------------- */

#define ROUNDING 2      /* ns the published fixed point may add (rule 8) */

/* The binary point for a rate of magnitude a ns per tick: as far right as keeps
 * a * 2^shift under 2^62 (62 at most). */
static uint32_t shift_for(double a)
{
	uint64_t bits;
	int e;

	if (!(a > 0x1p-900))   /* also NaN */
		return 62;
	memcpy(&bits, &a, sizeof(bits));
	e = (int)((bits >> 52) & 0x7ff) - 1022;   /* a < 2^e, as frexp() gives it */
	return e >= 62 ? 0 : e < 0 ? 62 : (uint32_t)(62 - e);
}

/* Rounded, saturating at +-2^62 (and 0 for what is not a number). */
int64_t fts__estimate_round_i64(double v)
{
	if (!(v > -0x1p62))
		return v == v ? -(INT64_C(1) << 62) : 0;
	if (!(v < 0x1p62))
		return INT64_C(1) << 62;
	return (int64_t)(v >= 0 ? v + 0.5 : v - 0.5);
}

/* The record of a segment: its line in fixed point, and whether it may take the fast
 * path over [key, end] (rising, shift >= 1, and its line fits 62 bits there). A double
 * holds the slope to 2^-53 of itself: over a day of ticks that is below a ns, and the
 * rounding allowance covers it. */
void fts__estimate_rule8_rec(const struct fts__seg_line *o, struct fts__rec *r)
{
	uint32_t shift = shift_for(fabs(o->s));
	double y0 = floor(o->y0 + 0.5), y1 = o->y0 + o->s * (double)(o->end - o->key);
	/* the doubles the line was worked out in round too: 16 units in their last place,
	 * at the largest value involved */
	double big = fmax(fmax(fabs(o->y0), fabs(y1)), fabs(o->err));
	double err = ceil(o->err + fabs(o->y0 - y0) + big * 0x1p-48) + ROUNDING;
	__int128 r0 = isfinite(y0) ? o->oy + (__int128)fmax(fmin(y0, 0x1p100), -0x1p100) : 0;

	r->shift = shift;
	r->mult = fts__estimate_round_i64(o->s * (double)(UINT64_C(1) << shift));
	/* What does not fit says nothing: a bound of 2^63 makes conversions ERANGE. */
	if (r0 > INT64_MAX || r0 < INT64_MIN || !(err < 0x1p62) || !(fabs(o->s) < 0x1p62)) {
		r->r0 = r0 > 0 ? INT64_MAX : INT64_MIN;
		r->err = UINT64_C(1) << 63;
	} else {
		r->r0 = (int64_t)r0;
		r->err = (uint64_t)err;
	}
	r->flags = o->step ? FTS__SEG_STEP : 0;
	if (fts__seg_fast(r->r0, r->mult, r->shift, o->end - o->key))
		r->flags |= FTS__SEG_FAST;
}

/* A line carried on from (key, y at oy) at band bd's middle rate, its bound growing by
 * the band's half-width: as a record and its growth, in one fixed point. */
void fts__estimate_rule9_end(uint64_t key, int64_t oy, double y, double err, const struct fts__band *bd,
			     struct fts__rec *r, int64_t *grow)
{
	struct fts__seg_line o = { .key = key, .end = key, .oy = oy, .y0 = y, .err = err,
			 .s = (bd->lo + bd->hi) / 2 };
	fts__estimate_rule8_rec(&o, r);
	double g = ceil((bd->hi - bd->lo) / 2 * (double)(UINT64_C(1) << r->shift)) + 1;

	*grow = g < 0x1p62 ? (int64_t)g : INT64_C(1) << 62;
	r->flags = 0;
}

static void line_of(const struct fts__rec *r, int64_t oy, double *y0, double *s)
{
	*y0 = (double)((__int128)r->r0 - oy);
	*s = (double)r->mult / (double)(UINT64_C(1) << r->shift);
}

/* Merging segments a (from ka) and b (from kb, to end): the line from a's start to b's
 * end, and the bound that covers both (exact for lines with constant bounds: the
 * distance between two lines is largest at an end). */
void fts__estimate_rule10_merge(uint64_t ka, const struct fts__rec *a, uint64_t kb,
				const struct fts__rec *b, uint64_t end, struct fts__seg_line *o)
{
	double ya, sa, yb, sb, xb = (double)(kb - ka), xe = (double)(end - ka), y1, s;

	line_of(a, a->r0, &ya, &sa);
	line_of(b, a->r0, &yb, &sb);
	y1 = yb + sb * (xe - xb);
	s = (y1 - ya) / xe;
	*o = (struct fts__seg_line){ .key = ka, .end = end, .oy = a->r0, .y0 = ya, .s = s };
	o->err = fmax(fmax((double)a->err + fabs(ya + sa * xb - (ya + s * xb)),
			   (double)b->err + fabs(yb - (ya + s * xb))),
		      (double)b->err + fabs(y1 - (ya + s * xe)));
	o->err = fmax(o->err, (double)a->err);
}

/* Rule 10: a quarter of the room free makes a merge pass, O(segments), rare: once per
 * quarter of the room at most. */
size_t fts__estimate_rule10_keep(size_t nfinal, size_t adding, size_t max)
{
	size_t keep = max * 3 / 4;

	if (nfinal + adding <= max)
		return 0;
	if (keep + adding > max)
		keep = max > adding ? max - adding : 0;
	return keep ? keep : 1;
}

static int by_cost(const void *p, const void *q)
{
	const struct fts__merge_cand *a = p, *b = q;
	return (a->cost > b->cost) - (a->cost < b->cost);
}

size_t fts__estimate_rule10_pick(const uint64_t *key, const struct fts__rec *rec, size_t n, size_t want,
				 struct fts__merge_cand *cand, unsigned char *taken)
{
	size_t nc = 0, took = 0;

	memset(taken, 0, n);
	for (size_t i = 0; i + 1 < n; i++) {
		struct fts__seg_line o;
		if ((rec[i].flags | rec[i + 1].flags) & FTS__SEG_STEP)
			continue;
		fts__estimate_rule10_merge(key[i], &rec[i], key[i + 1], &rec[i + 1], key[i + 2], &o);
		cand[nc++] = (struct fts__merge_cand){
			o.err - fmax((double)rec[i].err, (double)rec[i + 1].err), i };
	}
	qsort(cand, nc, sizeof(*cand), by_cost);
	for (size_t j = 0; j < nc && took < want; j++) {
		size_t i = cand[j].pos;
		if (taken[i] || taken[i + 1])
			continue;
		taken[i] = 1;
		taken[i + 1] = 2;   /* merged into i */
		took++;
	}
	return took;
}

/* Rule 13: a history told of a step gives its interval no verdict (rule 3) and the
 * envelope of one step of any size (rule 5): the clocks a sleep may have moved are
 * told, whichever way the counter went through it. */
uint32_t fts__estimate_rule13_moved(int step, int tai_step, int suspend, int ran_on)
{
	return (uint32_t)(step || suspend) << FTS__CLK_REALTIME |
	       (uint32_t)(tai_step || suspend) << FTS__CLK_TAI |
	       (uint32_t)!!suspend << FTS__CLK_BOOTTIME |
	       (uint32_t)!!ran_on << FTS__CLK_MONOTONIC | (uint32_t)!!ran_on << FTS__CLK_RAW;
}

enum fts__estimate_rule14_obs fts__estimate_rule14_obs(int have_era, uint64_t last_hi, uint64_t lo, int64_t raw_gap)
{
	if (!have_era || lo < last_hi)
		return FTS__OBS_NEW_ERA;
	return raw_gap < FTS__OBS_GAP_NS ? FTS__OBS_BRIDGE : FTS__OBS_JOIN;
}

int fts__estimate_rule14_may_hold(uint64_t r, uint64_t first_lo, int64_t gap_before, uint64_t top)
{
	return (gap_before < 0 || r + (uint64_t)gap_before >= first_lo) && r <= top;
}

void fts__estimate_rule14_one_obs(uint64_t lo, uint64_t hi, int64_t v, uint64_t r, __int128 *out_lo,
				  __int128 *out_hi)
{
	uint64_t mid = lo + (hi - lo) / 2;
	__int128 d = (__int128)r - (__int128)mid, dd = d < 0 ? -d : d;
	__int128 grow = dd * FTS__ONE_OBS_PPM / 1000000 + (hi - lo + 1) / 2 + 1;

	*out_lo = (__int128)v + d - grow;
	*out_hi = (__int128)v + d + grow;
}

/* Rule 15: P2's band is measured over the history; carried further from it than the
 * history is long, the extrapolation (rule 9) would rest on more than was ever seen.
 * The floor keeps a short history (a few samples) useful for the stamps around it. */
int fts__estimate_reach_history(uint64_t first, uint64_t newest, uint64_t x, int64_t beyond_ns)
{
	uint64_t span = newest - first;

	if ((x < first && first - x <= span) || (x >= first && (x <= newest || x - newest <= span)))
		return 1;
	return beyond_ns <= FTS__REACH_FLOOR_NS;
}

/* Rule 15: no stamp of this process precedes the boot (CLOCK_MONOTONIC_RAW starts at 0
 * there) or follows the conversion's own counter read (the caller stored it before the
 * call), beyond what the counters of other CPUs may be ahead of this one's. A caller
 * passes what it knows: a stamp after the history's first sample reads 0 +- 0 for all
 * it matters, one before it lies 0 ns ahead. */
int fts__estimate_reach_live(int64_t raw_ns, int64_t raw_err, int64_t ahead_ns, int64_t skew_ns)
{
	if ((__int128)raw_ns + raw_err < 0)
		return 0;
	return ahead_ns <= FTS__REACH_AHEAD_NS + (skew_ns > 0 ? skew_ns : 0);
}
