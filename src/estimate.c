/* estimate.c - the rules of the history's model, one function each (see estimate.h
 * and faststamp.h, "THE MODEL"). */
#include <math.h>
#include <stddef.h>

#include "estimate.h"
#include "invariant.h"

/* fmax and fmin without their NaN rules, inline: nothing here is NaN. */
static inline double max2(double a, double b) { return a > b ? a : b; }
static inline double min2(double a, double b) { return a < b ? a : b; }

/* Rule 1. The clock read r at some counter value within h ticks of x: at x itself it
 * read within h ticks' worth of r, and a ns more for its whole-ns reading. */
double fts__pt_uncertainty(const struct fts__pt *p, double rate_hi)
{
	return p->h * rate_hi + 1;
}

/* Rule 2. The rate between midpoints, and how far the true mean rate between the
 * actual reads may be from it: the reads lay up to ha + hb ticks nearer or further
 * apart, and the readings were rounded down. */
struct fts__ival fts__ival_of(const struct fts__pt *a, const struct fts__pt *b)
{
	double len = fts__d128(b->xi - a->xi), w = a->h + b->h, dr = fts__d128(b->ri - a->ri);
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

int fts__is_step(const struct fts__ival *self, const struct fts__ival *left,
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
int fts__neighbour(const struct fts__pt *p, const int *step, int n, int k, int dir,
		   struct fts__ival *out)
{
	int j = dir > 0 ? k + 1 : k - 1, hops = 0, end;
	double want = fts__d128(p[k + 1].xi - p[k].xi) / 2;

	while (j >= 0 && j + 1 < n && step[j] && hops < 1) {
		j += dir;
		hops++;
	}
	if (j < 0 || j + 1 >= n || step[j])
		return 0;
	/* the span: points j .. end (dir > 0) or end .. j + 1 (dir < 0) */
	if (dir > 0) {
		for (end = j + 1; end + 1 < n && end - j < 2 && !step[end] &&
				  fts__d128(p[end].xi - p[j].xi) < want; end++)
			;
		*out = fts__ival_of(&p[j], &p[end]);
	} else {
		for (end = j; end > 0 && j + 1 - end < 2 && !step[end - 1] &&
			      fts__d128(p[j + 1].xi - p[end].xi) < want; end--)
			;
		*out = fts__ival_of(&p[end], &p[j + 1]);
	}
	out->step = 0;
	return 1;
}

/* Rule 4. Between two samples the clock's rate may change, at unknown points: the
 * rates measured beside the interval (each give or take its noise) bound it, and its
 * own rate unless it holds a step (a step bends it), widened by the tolerance. With
 * nothing beside it, its own rate is all there is, and a step too small for rule 3 may
 * hide in it: the band allows for that. More rates only widen the band. */
struct fts__band fts__band_of(const struct fts__ival *self, const struct fts__ival *left,
			      const struct fts__ival *right, double tol)
{
	const struct fts__ival *n[3] = { left, right, self->step ? NULL : self };
	struct fts__band b = { INFINITY, -INFINITY };
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
 * sparse, that change is the one event there, and no step hides in the interval. */
int fts__rate_change(const struct fts__ival *self, const struct fts__ival *left,
		     const struct fts__ival *right, double tol)
{
	double m = max2(fabs(left->rate), fabs(right->rate)), slack = 2 * tol * m;
	double lo = min2(left->rate, right->rate), hi = max2(left->rate, right->rate);

	/* the sides disagree, and the interval's own rate lies between them, as one
	 * change from one to the other leaves it */
	return hi - lo > left->noise + right->noise + slack &&
	       self->rate >= lo - self->noise - slack && self->rate <= hi + self->noise + slack;
}

/* Rule 5. If no step happened between a and x, the truth at x lies in the cone forward
 * from a with the band's rates; if none happened between x and b, in the cone back from
 * b. With no step at all, in both: their intersection. With one step at most, in one
 * of the two: their hull. Each cone edge is a line; the edges of the intersection and
 * of the hull bend where a forward edge crosses a backward one: the envelope holds the
 * ends and those points. */
struct fts__env fts__envelope(const struct fts__pt *a, const struct fts__pt *b,
			      const struct fts__band *bd, int may_step)
{
	double len = b->x - a->x;
	double ua = fts__pt_uncertainty(a, bd->hi), ub = fts__pt_uncertainty(b, bd->hi);
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
		e.hi[i] = may_step ? max2(fh, bh) : min2(fh, bh);
		e.lo[i] = may_step ? min2(fl, bl) : max2(fl, bl);
		/* No room between the cones: no path without a step joins the samples, so
		 * there was one after all. */
		if (e.lo[i] > e.hi[i]) {
			FTS__ASSERT(!may_step);   /* the hull of two cones is never empty */
			return fts__envelope(a, b, bd, 1);
		}
	}
	return e;
}

/* Rule 8. Each edge of the envelope is straight between its points: the distance from
 * a line to it is largest at one of them. */
double fts__env_dist(const struct fts__env *e, double x0, double y0, double s)
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
void fts__step_line(const struct fts__env *e, double *y0, double *s)
{
	double m0 = (e->lo[0] + e->hi[0]) / 2, m1 = (e->lo[3] + e->hi[3]) / 2;

	*y0 = m0;
	*s = (m1 - m0) / (e->x[3] - e->x[0]);
}

/* Rule 6. The slopes from the start point that pass a sample within its range form an
 * interval; a run keeps the intersection of its samples' intervals. */
void fts__fit_start(struct fts__fit *f, double x0, double y0)
{
	*f = (struct fts__fit){ .x0 = x0, .y0 = y0, .lo = -INFINITY, .hi = INFINITY };
}

int fts__fit_add(struct fts__fit *f, double x, double ylo, double yhi)
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

double fts__fit_slope(const struct fts__fit *f)
{
	if (!isfinite(f->lo) || !isfinite(f->hi))   /* one side open: no sample yet */
		return isfinite(f->lo) ? f->lo : isfinite(f->hi) ? f->hi : 0;
	return (f->lo + f->hi) / 2;
}
