/* calib.c - a history of (counter, reference) samples and conversion with a bound.
 *
 * Writers (fts_calib_add) keep, for every kept sample, a knot: the bracket midpoint c,
 * the reference reading r, the bracket half-width w, and for the interval that starts
 * there the residual of samples merged into it. From the knots they build the
 * intervals (struct fts__seg) that readers use: slope, rate band, end uncertainties,
 * all as integers. Readers look up an interval and evaluate a few 128-bit products,
 * under a sequence count, writing nothing shared.
 *
 * The bound. Between two samples at c0 and c1, with the rate assumed within [lo, hi]:
 * if no step happened between c0 and x, r(x) lies in the cone from c0,
 * r0 + (x - c0) * [lo, hi]; if none happened between x and c1, in the cone back from
 * c1, r1 - (c1 - x) * [lo, hi]. With at most one step in the interval one of the two
 * holds, so the hull of both covers the truth. Relative to the line r0 -> r1 (slope s)
 * the cones are [-(x - c0)(s - lo), (x - c0)(hi - s)] and [-(c1 - x)(hi - s),
 * (c1 - x)(s - lo)], each widened by the uncertainty at its end. Inside a merged
 * interval a dropped sample sits within span of x on each side and within e of the
 * line, so the distances are capped at span.
 *
 * The band comes from the neighbouring intervals' rates (a rate change at an unknown
 * point inside is bounded by the rates on either side), widened by their bracket noise
 * and a tolerance. An interval whose rate the intervals around it disagree with by more
 * than a slew could is a step: never interpolated, its estimate is the middle of the
 * hull. Doubt counts as a step, since its bound covers both sides either way.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "seg.h"

#define DEFAULT_MAX_SAMPLES 1024
#define MIN_MAX_SAMPLES 8
#define DEFAULT_RATE_TOL_PPB 1000
/* Beyond any slew: the kernel adjusts at most +-500 ppm (NTP frequency) plus 500 ppm
 * (adjtime), so a larger change of rate between intervals is a step. */
#define STEP_PPM 2000.0L
/* Merged residuals may grow to this many times the samples' own uncertainty. */
#define MERGE_BUDGET 8
#define FIXED_MAX_SHIFT 62
/* A step is judged by the intervals up to this many on each side. */
#define STEP_WINDOW 4
/* A new sample changes step verdicts STEP_WINDOW intervals back, and the bands (which
 * look up to STEP_WINDOW intervals away) beyond those. */
#define REFRESH_BACK (2 * STEP_WINDOW + 2)

struct knot {
	uint64_t c;      /* bracket midpoint */
	int64_t r;       /* reference ns */
	uint64_t w;      /* bracket half-width, ticks */
	int64_t emid;    /* how far merged samples after this knot lay from its line, ns */
	uint64_t span;   /* longest original gap in the interval after it, 0 = its length */
	int step;        /* the interval after it holds a step */
	int sure;        /* not a step, and intervals around it agree with its rate */
	int final;       /* that verdict is settled: it had a full window each side */
	/* Merged interval: the rate (and its noise) of the original intervals at its two
	 * edges, which is what a neighbour's rate may have changed from or to. */
	long double el, el_noise, er, er_noise;
};

/* ---- read side --------------------------------------------------------------------- */

int fts_calib_convert(const struct fts_calib *c, uint64_t counter, int64_t *ref_ns,
		      int64_t *err_ns)
{
	struct fts__seg seg;
	int64_t ns, err;
	int where, rc;

	if (!c || !ref_ns) {
		errno = EINVAL;
		return -1;
	}
	where = fts__calib_find(c, counter, &seg);
	if (where == -ENODATA) {
		errno = ENODATA;
		return -1;
	}
	rc = fts__seg_convert(&seg, where, counter, &ns, &err);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	*ref_ns = ns;
	if (err_ns)
		*err_ns = err;
	return 0;
}

size_t fts_calib_count(const struct fts_calib *c)
{
	return c ? FTS__LD(c->n) : 0;
}

int fts_calib_range(const struct fts_calib *c, uint64_t *oldest, uint64_t *newest)
{
	uint64_t a = 0, b = 0;
	unsigned seq;
	size_t n;

	if (!c || !oldest || !newest) {
		errno = EINVAL;
		return -1;
	}
	do {
		seq = fts__calib_read_begin(c);
		n = FTS__LD(c->n);
		if (n >= 1 && n <= c->cap) {
			a = FTS__LD(c->segs[0].c0);
			b = FTS__LD(c->segs[n >= 2 ? n - 2 : 0].c1);
		}
	} while (fts__calib_read_retry(c, seq));
	if (n == 0) {
		errno = ENODATA;
		return -1;
	}
	*oldest = a;
	*newest = b;
	return 0;
}

/* ---- write side -------------------------------------------------------------------- */

static long double slope(const struct fts_calib *c, size_t k)
{
	const struct knot *a = &c->knots[k], *b = &c->knots[k + 1];
	return ((long double)b->r - (long double)a->r) / (long double)(b->c - a->c);
}

static uint64_t seg_len(const struct fts_calib *c, size_t k)
{
	return c->knots[k + 1].c - c->knots[k].c;
}

/* How far the slope of interval k may be off: the reference reads lay somewhere in
 * their brackets, so the true rate lies between dr / (len + w0 + w1) and
 * dr / (len - w0 - w1), and the reference's 1 ns resolution adds 2 ns. */
static long double rate_noise(long double s, uint64_t len, uint64_t w)
{
	if (len <= w)   /* the brackets overlap: the rate is not known from this interval */
		return fabsl(s) + 2;
	return (fabsl(s) * (long double)w + 2) / (long double)(len - w);
}

static long double slope_noise(const struct fts_calib *c, size_t k)
{
	return rate_noise(slope(c, k), seg_len(c, k), c->knots[k].w + c->knots[k + 1].w);
}

static int seg_is_step(const struct fts_calib *c, size_t k)
{
	return c->knots[k].step;
}

/* A step: the rate disagrees with the intervals around it by more than any slew could
 * (2000 ppm of the smaller rate, plus both rates' noise). An interval agrees only if its
 * rate is known to better than half that margin, else its noise would let it agree
 * with anything. Clean means at least one agrees and no more disagree than agree; when
 * none can tell, there is no step (and the band allows for a small one), but the
 * verdict is not sure: a step too small for the noise may hide in its rate. Doubt
 * counts as a step: its bound then covers both sides. */
static int classify(const struct fts_calib *c, size_t k, int *sure)
{
	size_t nseg = c->n - 1, from = k > STEP_WINDOW ? k - STEP_WINDOW : 0;
	size_t to = k + STEP_WINDOW + 1 < nseg ? k + STEP_WINDOW + 1 : nseg;
	long double s = slope(c, k), noise = slope_noise(c, k);
	unsigned agree = 0, disagree = 0;

	*sure = 0;
	if (s <= 0)
		return 1;
	for (size_t j = from; j < to; j++) {
		long double sj = slope(c, j), nj = slope_noise(c, j);
		if (j == k)
			continue;
		if (fabsl(sj - s) > fminl(s, fabsl(sj)) * STEP_PPM * 1e-6L + noise + nj)
			disagree++;
		else if (nj < s * STEP_PPM * 0.5e-6L)
			agree++;
	}
	if (agree + disagree == 0)
		return 0;
	*sure = agree > 0 && disagree <= agree;
	return !*sure;
}

/* The rate of interval k at its edge on side dir (-1 left, +1 right), and its noise. */
static void edge_rate(const struct fts_calib *c, size_t k, int dir, long double *r,
		      long double *noise)
{
	const struct knot *a = &c->knots[k];

	if (!a->span) {
		*r = slope(c, k);
		*noise = slope_noise(c, k);
	} else if (dir < 0) {
		*r = a->el;
		*noise = a->el_noise;
	} else {
		*r = a->er;
		*noise = a->er_noise;
	}
}

/* Widen [lo, hi] by the rate of interval k (at its edge on side dir; 0: its own line)
 * and its noise; with hidden, also by the most that a step too small for the step rule
 * could have moved that rate: 2000 ppm (a 1.5 factor for the noise of the rate it
 * agreed with, under half of that) plus its own noise. */
static void band_add(long double *lo, long double *hi, int *have, const struct fts_calib *c,
		     size_t k, int dir, int hidden)
{
	long double s, e;

	if (dir) {
		edge_rate(c, k, dir, &s, &e);
	} else {
		s = slope(c, k);
		e = slope_noise(c, k);
	}
	if (hidden)
		e += fabsl(s) * STEP_PPM * 1.5e-6L + e;
	if (!*have || s - e < *lo)
		*lo = s - e;
	if (!*have || s + e > *hi)
		*hi = s + e;
	*have = 1;
}

static int64_t clamp_ns(long double v)
{
	if (v >= 0x1p62L)
		return INT64_C(1) << 62;
	return (int64_t)ceill(v);
}

static int64_t to_fixed(long double v, uint32_t shift)
{
	long double f = ldexpl(v, (int)shift);
	/* within +-(2^62 - 1), so that differences of two fit an int64 */
	if (f >= 0x1p62L)
		return (INT64_C(1) << 62) - 1;
	if (f <= -0x1p62L)
		return -(INT64_C(1) << 62) + 1;
	return (int64_t)llroundl(f);
}

/* Can interval j give another interval its rate? It holds no step; with sure, it is
 * also known to hold none too small to see (its rate agreed with others). */
static int rate_source(const struct fts_calib *c, size_t j, int sure)
{
	return !seg_is_step(c, j) && (!sure || c->knots[j].sure);
}

/* The nearest interval on side dir (-1, +1) of k, within STEP_WINDOW, that can give k
 * its rate: what k's rate may have changed to or from (a step moves the clock, not its
 * rate, so steps in between do not matter). -1 if there is none. */
static long neighbour(const struct fts_calib *c, size_t k, int dir, int sure)
{
	for (long j = (long)k + dir, hops = 0; j >= 0 && (size_t)j + 1 < c->n && hops < STEP_WINDOW;
	     j += dir, hops++)
		if (rate_source(c, (size_t)j, sure))
			return j;
	return -1;
}

/* The rates interval k may run at, before the tolerance is added. Between two samples
 * the rate may change at an unknown point: the neighbours' rates bound it. A merged
 * interval was checked at every sample it absorbed, and carries what the rate did
 * between them in its residual: its own rate will do. A step's own rate says nothing,
 * and a small step hidden in a neighbour's rate would shift its whole band: it takes
 * sure neighbours only, allowing for what may hide in them. */
static void band_of(const struct fts_calib *c, size_t k, long double *plo, long double *phi)
{
	size_t nseg = c->n - 1;
	long double lo = 0, hi = 0;
	int have = 0, step = seg_is_step(c, k);
	long j;

	if (!c->knots[k].span) {
		if ((j = neighbour(c, k, -1, step)) >= 0)
			band_add(&lo, &hi, &have, c, (size_t)j, 1, step);   /* its right edge */
		if ((j = neighbour(c, k, 1, step)) >= 0)
			band_add(&lo, &hi, &have, c, (size_t)j, -1, step);  /* its left edge */
	}
	if (!step) {
		/* With no neighbour to give the rate, a step too small to tell from a slew
		 * could hide in this interval's own rate: allow for the most the step rule
		 * lets pass (a merged interval was checked at every sample it absorbed). */
		band_add(&lo, &hi, &have, c, k, 0, !have && !c->knots[k].span);
	} else if (!have) {
		/* A step with no sure neighbour: borrow the nearest sure interval. */
		for (size_t d = 1; d < nseg && !have; d++) {
			if (k >= d && rate_source(c, k - d, 1))
				band_add(&lo, &hi, &have, c, k - d, 1, 1);
			else if (k + d < nseg && rate_source(c, k + d, 1))
				band_add(&lo, &hi, &have, c, k + d, -1, 1);
		}
		if (!have) {    /* nothing is known of the rate: anywhere up to the fastest seen */
			lo = 0;
			for (size_t i = 0; i < nseg; i++)
				hi = fmaxl(hi, fabsl(slope(c, i)) + slope_noise(c, i));
		}
	}
	*plo = lo;
	*phi = hi;
}

/* What interval k publishes, before rounding: its rate band with the tolerance, the
 * uncertainties at its ends, and its span. */
struct seg_params {
	long double lo, hi, e0, e1;
	uint64_t span;
};

static void seg_params(const struct fts_calib *c, size_t k, struct seg_params *p)
{
	const struct knot *a = &c->knots[k], *b = &c->knots[k + 1];
	long double m;

	band_of(c, k, &p->lo, &p->hi);
	m = (p->lo + p->hi) / 2;
	p->lo -= fabsl(m) * c->tol;
	p->hi += fabsl(m) * c->tol;
	if (p->lo < 0)
		p->lo = 0;
	p->e0 = fmaxl((long double)a->w * p->hi + 1, (long double)a->emid);
	p->e1 = fmaxl((long double)b->w * p->hi + 1, (long double)a->emid);
	p->span = a->span ? a->span : b->c - a->c;
}

/* Rebuild interval k from its knots and neighbours and publish it. */
static void seg_build(struct fts_calib *c, size_t k, int step)
{
	const struct knot *a = &c->knots[k], *b = &c->knots[k + 1];
	long double s = slope(c, k), m;
	struct fts__seg *g = &c->segs[k];
	uint32_t shift = FIXED_MAX_SHIFT;
	struct seg_params p;

	seg_params(c, k, &p);
	m = fmaxl(fabsl(s), p.hi);
	while (shift > 0 && ldexpl(m, (int)shift) >= 0x1p62L)
		shift--;

	FTS__ST(g->c0, a->c);
	FTS__ST(g->c1, b->c);
	FTS__ST(g->r0, a->r);
	FTS__ST(g->r1, b->r);
	FTS__ST(g->shift, shift);
	FTS__ST(g->mult, to_fixed(s, shift));
	FTS__ST(g->lo, to_fixed(p.lo, shift));
	FTS__ST(g->hi, to_fixed(p.hi, shift));
	FTS__ST(g->span, p.span);
	FTS__ST(g->e0, clamp_ns(p.e0));
	FTS__ST(g->e1, clamp_ns(p.e1));
	FTS__ST(g->step, (uint32_t)step);
}

/* Recompute intervals from..n-2: steps first (each looks left), then bands (which look
 * both ways). */
static void refresh(struct fts_calib *c, size_t from)
{
	size_t nseg = c->n - 1;

	if (c->n < 2) {
		/* One sample: publish its position for fts_calib_range. */
		if (c->n == 1) {
			FTS__ST(c->segs[0].c0, c->knots[0].c);
			FTS__ST(c->segs[0].c1, c->knots[0].c);
		}
		return;
	}
	for (size_t k = from; k < nseg; k++) {
		if (c->knots[k].final)
			continue;
		c->knots[k].step = classify(c, k, &c->knots[k].sure);
		c->knots[k].final = k + STEP_WINDOW < nseg;
	}
	/* A band looks one interval back, so the one before the range changes too. */
	for (size_t k = from ? from - 1 : 0; k < nseg; k++)
		seg_build(c, k, seg_is_step(c, k));
}

/* Uncertainty of knot k's midpoint in ns, at the rate of the interval around it. */
static long double knot_err(const struct fts_calib *c, size_t k, long double rate)
{
	return (long double)c->knots[k].w * fabsl(rate) + 1;
}

/* How far the truth may lie from the line (cr, rr) -> slope sn inside interval j: j's
 * own bound (the hull of its two cones, as fts__seg_eval draws it) around its line,
 * moved by the distance between the two lines. Both edges of the hull are concave in
 * x, pieces joined at the ends and at span from either end, so the worst is at one of
 * those points. */
static long double envelope_off(const struct fts_calib *c, size_t j, uint64_t cr,
				int64_t rr, long double sn)
{
	const struct knot *a = &c->knots[j], *b = &c->knots[j + 1];
	long double sj = slope(c, j), up, dn, worst = 0;
	struct seg_params p;
	uint64_t len = b->c - a->c, at[4];

	seg_params(c, j, &p);
	up = p.hi - sj;
	dn = sj - p.lo;
	at[0] = 0;
	at[1] = len;
	at[2] = p.span < len ? p.span : len;
	at[3] = len - at[2];
	for (int i = 0; i < 4; i++) {
		long double d1 = (long double)(at[i] < p.span ? at[i] : p.span);
		long double d2 = (long double)(len - at[i] < p.span ? len - at[i] : p.span);
		long double hi_off = fmaxl(d1 * up + p.e0, d2 * dn + p.e1);
		long double lo_off = fminl(-d1 * dn - p.e0, -d2 * up - p.e1);
		long double moved = (long double)((__int128)a->r - rr) + (sj - sn) * (long double)at[i] -
				    sn * (long double)(a->c - cr);
		worst = fmaxl(worst, fmaxl(hi_off + moved, -(lo_off + moved)));
	}
	return worst;
}

/* The residual to keep after dropping knot k (between k-1 and k+1): the merged interval
 * must bound the truth wherever its two intervals did. fts__seg_eval bounds a merged
 * interval by its residual plus its own cone, and that cone reaches at least
 * min(span, length / 2) from one end at every point, so that much of the old bounds
 * is covered already. */
static long double merged_resid(const struct fts_calib *c, size_t k)
{
	const struct knot *a = &c->knots[k - 1], *b = &c->knots[k], *d = &c->knots[k + 1];
	uint64_t len = d->c - a->c, sa = a->span ? a->span : b->c - a->c;
	uint64_t sb = b->span ? b->span : d->c - b->c, span = sa > sb ? sa : sb;
	long double s = ((long double)d->r - a->r) / (long double)len;
	long double noise = rate_noise(s, len, a->w + d->w);
	long double lo = fmaxl(0, s - noise - fabsl(s) * c->tol), hi = s + noise + fabsl(s) * c->tol;
	long double reach = (long double)(span < len / 2 ? span : len / 2);
	long double worst = fmaxl(envelope_off(c, k - 1, a->c, a->r, s),
				  envelope_off(c, k, a->c, a->r, s));

	/* +2: the published fixed-point rates and products round */
	return fmaxl(0, worst - fmaxl(hi - s, s - lo) * reach) + 2;
}

static void drop_knot(struct fts_calib *c, size_t k, long double resid)
{
	struct knot *a = &c->knots[k - 1], *b = &c->knots[k];
	uint64_t sa = a->span ? a->span : b->c - a->c;
	uint64_t sb = b->span ? b->span : c->knots[k + 1].c - b->c;
	long double el, eln, er, ern;

	edge_rate(c, k - 1, -1, &el, &eln);
	edge_rate(c, k, 1, &er, &ern);
	a->el = el;
	a->el_noise = eln;
	a->er = er;
	a->er_noise = ern;
	a->emid = clamp_ns(resid);
	a->span = sa > sb ? sa : sb;
	a->step = 0;     /* two clean intervals make a clean one */
	a->sure = a->sure && b->sure;
	a->final = 1;
	memmove(&c->knots[k], &c->knots[k + 1], (c->n - k - 1) * sizeof(c->knots[0]));
	FTS__ST(c->n, c->n - 1);
}

/* Merge knot n-3 into the interval around it when the line through its neighbours
 * predicts it within the budget. Not n-2: the interval after it must have a neighbour
 * on both sides before its band is known. */
static void try_merge(struct fts_calib *c)
{
	size_t k = c->n - 3;
	long double s, resid, budget;

	if (c->n < 4 || seg_is_step(c, k - 1) || seg_is_step(c, k) || seg_is_step(c, k + 1))
		return;
	/* the two rates must agree within their noise */
	if (fabsl(slope(c, k - 1) - slope(c, k)) > slope_noise(c, k - 1) + slope_noise(c, k))
		return;
	s = slope(c, k - 1);
	resid = merged_resid(c, k);
	budget = MERGE_BUDGET * fmaxl(knot_err(c, k - 1, s),
				      fmaxl(knot_err(c, k, s), knot_err(c, k + 1, s)));
	if (resid <= budget)
		drop_knot(c, k, resid);
}

/* At capacity: drop every other knot of the older half (not the ends of steps), so the
 * whole past stays convertible at a coarser grain. The caller rebuilds the intervals. */
static void thin(struct fts_calib *c)
{
	size_t half = c->n / 2, n0 = c->n;

	for (size_t k = 1; k < half && k + 1 < c->n; k++)
		if (!seg_is_step(c, k - 1) && !seg_is_step(c, k))
			drop_knot(c, k, merged_resid(c, k));
	if (c->n == n0) {  /* all steps: forget the oldest */
		memmove(&c->knots[0], &c->knots[1], (c->n - 1) * sizeof(c->knots[0]));
		FTS__ST(c->n, c->n - 1);
	}
}


int fts_calib_add(struct fts_calib *c, uint64_t before, int64_t ref_ns, uint64_t after)
{
	uint64_t mid;

	if (!c || before > after || (c->n && before < c->last_after)) {
		errno = EINVAL;
		return -1;
	}
	mid = before + (after - before) / 2;
	if (c->n && mid <= c->knots[c->n - 1].c) {
		errno = EINVAL;
		return -1;
	}
	fts__calib_write_begin(c);
	if (c->n == c->cap) {
		thin(c);
		refresh(c, 0);
	}
	c->knots[c->n] = (struct knot){ .c = mid, .r = ref_ns, .w = after - mid };
	FTS__ST(c->n, c->n + 1);
	c->last_after = after;
	refresh(c, c->n > REFRESH_BACK ? c->n - REFRESH_BACK : 0);
	if (c->n >= 4) {
		size_t n0 = c->n;
		try_merge(c);
		if (c->n != n0)
			refresh(c, c->n > REFRESH_BACK ? c->n - REFRESH_BACK : 0);
	}
	FTS__ST(c->newest, c->n >= 2 ? c->knots[c->n - 1].c : 0);
	fts__calib_write_end(c);
	return 0;
}

void fts__calib_reset(struct fts_calib *c)
{
	fts__calib_write_begin(c);
	FTS__ST(c->n, (size_t)0);
	FTS__ST(c->newest, (uint64_t)0);
	c->last_after = 0;
	fts__calib_write_end(c);
}

struct fts_calib *fts_calib_new_opts(const struct fts_calib_opts *opts)
{
	size_t cap = DEFAULT_MAX_SAMPLES;
	uint32_t tol = DEFAULT_RATE_TOL_PPB;
	struct fts_calib *c;

	if (opts) {
		size_t need = offsetof(struct fts_calib_opts, max_samples) + sizeof(size_t);
		if (opts->size < need) {
			errno = EINVAL;
			return NULL;
		}
		if (opts->max_samples)
			cap = opts->max_samples;
		if (opts->size >= offsetof(struct fts_calib_opts, rate_tol_ppb) + sizeof(uint32_t) &&
		    opts->rate_tol_ppb)
			tol = opts->rate_tol_ppb;
		if (cap < MIN_MAX_SAMPLES || cap > SIZE_MAX / 2 / sizeof(struct fts__seg)) {
			errno = EINVAL;
			return NULL;
		}
	}
	if (posix_memalign((void **)&c, 64, sizeof(*c))) {
		errno = ENOMEM;
		return NULL;
	}
	memset(c, 0, sizeof(*c));
	c->cap = cap;
	c->tol = (long double)tol * 1e-9L;
	c->knots = calloc(cap, sizeof(*c->knots));
	if (posix_memalign((void **)&c->segs, 64, (cap - 1) * sizeof(*c->segs)))
		c->segs = NULL;
	if (!c->knots || !c->segs) {
		free(c->knots);
		free(c->segs);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	memset(c->segs, 0, (cap - 1) * sizeof(*c->segs));
	return c;
}

struct fts_calib *fts_calib_new(void)
{
	return fts_calib_new_opts(NULL);
}

void fts_calib_free(struct fts_calib *c)
{
	if (!c)
		return;
	free(c->knots);
	free(c->segs);
	free(c);
}
