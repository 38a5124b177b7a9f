/* estimate.h - the history's pure estimation: rates, step verdicts, bands, envelopes,
 * the fitted line. No storage, no publishing, no state beyond the arguments: each rule
 * of the model (faststamp.h, "THE MODEL") is one function here, and tests drive them
 * one by one. Doubles, on coordinates local to the samples involved. Not installed. */
#ifndef FTS__ESTIMATE_H
#define FTS__ESTIMATE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* An exact difference as a double: the common case, fitting 64 bits, without the
 * library call a 128-bit conversion takes. */
static inline double fts__estimate_d128(__int128 v)
{
	return v == (int64_t)v ? (double)(int64_t)v : (double)v;
}

/* A sample as the estimator sees it, relative to an origin (x0, r0) of the caller's
 * choosing: the reference read r (whole ns) at some counter value within x +- h. */
struct fts__pt {
	double x;        /* bracket midpoint, ticks from the origin */
	double h;        /* bracket half-width, ticks */
	double r;        /* reading, ns from the origin (whole ns) */
	int step;        /* the source says a step happened since the previous sample */
	/* x and r exactly: rates come from differences of these, so that two samples far
	 * from the origin (where a double's last place is ns wide) still give theirs */
	__int128 xi, ri;
};

/* An interval between two consecutive samples: what rules 2 and 3 make of it. */
struct fts__ival {
	double rate;     /* rule 2: ns per tick from one sample to the next */
	double noise;    /* rule 2: how far the true mean rate may be from it */
	int step;        /* rule 3: holds a step */
};

/* A band of rates (ns per tick), lo <= hi. */
struct fts__band {
	double lo, hi;
	double lag;      /* rule 5: ns the kernel's lag may put a reading off a change of
			  * rate inside the interval (fts__estimate_lag), else 0 */
};

/* Where the truth may be across an interval (rule 5): within [lo[i], hi[i]] at x[i],
 * and between consecutive points (in order of x) within the straight lines joining
 * them. */
struct fts__env {
	double x[4], lo[4], hi[4];
};

/* The step threshold (rule 3): beyond NTP's 500 ppm of frequency plus 500 ppm of
 * adjtime slew, a margin that a rate change between neighbours cannot explain. */
#define FTS__STEP_PPM 2000.0

/* Rule 1: how far what the clock read at a sample's midpoint may be from its reading r,
 * for a rate of at most rate_hi ns per tick near it. */
double fts__estimate_pt_uncertainty(const struct fts__pt *p, double rate_hi);
/* Rule 2: the interval from a to b. */
struct fts__ival fts__estimate_ival_of(const struct fts__pt *a, const struct fts__pt *b);
/* Rule 3: does an interval hold a step, given the intervals next to it (NULL where
 * there is none)? */
int fts__estimate_is_step(const struct fts__ival *self, const struct fts__ival *left,
			  const struct fts__ival *right);
/* Rule 4: the rate measured next to interval k (from p[k] to p[k+1]) on side dir
 * (-1, +1): over the nearest interval that holds no step (step[j] for the interval from
 * p[j]), two at most away, extended over the intervals beyond it (none holding a step,
 * two at most) until it spans half of interval k. p[0..n) are the points known, in
 * order. 1 with the span's rate in *out, 0 if there is none. */
int fts__estimate_neighbour(const struct fts__pt *p, const int *step, int n, int k, int dir,
			    struct fts__ival *out);
/* Rule 4: the band of rates the clock may run at inside an interval, from the rates
 * measured next to it (NULL where there is none) and its own unless it holds a step;
 * with no neighbour, its own, widened for a step too small to see; then widened by the
 * tolerance (relative). */
struct fts__band fts__estimate_band_of(const struct fts__ival *self, const struct fts__ival *left,
				       const struct fts__ival *right, double tol);
/* Rule 5: did the clock change its rate inside interval self: do the rates on its two
 * sides disagree, beyond their noise and the tolerance, with its own rate between? */
int fts__estimate_rate_change(const struct fts__ival *self, const struct fts__ival *left,
			      const struct fts__ival *right, double tol);
/* P3: the longest the kernel takes to publish a new rate it has reckoned, ns: the CPU
 * doing the update may be stopped inside it (docs/design.md, "A new rate, late"). */
#define FTS__LAG_NS 5e6
/* Rule 5: how far the kernel's lag may put a reading in interval self off a change of
 * rate from the left side's to the right side's (each give or take its noise), in ns:
 * 0 where its own rate is the left side's (the change was not inside). */
double fts__estimate_lag(const struct fts__ival *self, const struct fts__ival *left,
			 const struct fts__ival *right, double tol);
/* Rule 5: the envelope of the interval from a to b with band bd: the cones' hull where
 * a step may lie inside (may_step), else their intersection widened by the band's lag
 * (the kernel's behind a new rate, P3). */
struct fts__env fts__estimate_envelope(const struct fts__pt *a, const struct fts__pt *b,
				       const struct fts__band *bd, int may_step);
/* Rule 8: the largest distance from the line y = y0 + s * (x - x0) to the envelope. */
double fts__estimate_env_dist(const struct fts__env *e, double x0, double y0, double s);
/* Rule 7: the line of an interval that holds a step: through the middles of its
 * envelope at both ends. */
void fts__estimate_step_line(const struct fts__env *e, double *y0, double *s);

/* Rule 6: the fitted line through a run of samples, from a fixed start point
 * (x0, y0): every slope in [lo, hi] passes every sample of the run within its
 * uncertainty. */
struct fts__fit {
	double x0, y0;   /* the start point (ns and ticks from the origin) */
	double lo, hi;   /* the slopes left */
	unsigned n;      /* samples in the run */
};
/* Start a run at (x0, y0). */
void fts__estimate_fit_start(struct fts__fit *f, double x0, double y0);
/* Narrow the run's slopes by a sample at x that must be passed within [ylo, yhi].
 * 1 if slopes remain (f updated), 0 if none does (f unchanged). */
int fts__estimate_fit_add(struct fts__fit *f, double x, double ylo, double yhi);
/* The run's slope: the middle of those left. */
double fts__estimate_fit_slope(const struct fts__fit *f);
/* Rule 6, where a run ends besides a step (rule 7) and where no line fits
 * (fts__estimate_fit_add): it holds FTS__RUN_MAX intervals already (a bound on the work of an
 * add); the next interval's own scale e_iv (its envelope's distance from its chord,
 * rule 8) and the run's bound e_run differ by more than twice, FTS__RUN_SLACK_NS apart
 * (a run of tight intervals is not widened by a loose one, nor the other way round);
 * or the interval ends more than FTS__RUN_FAR_NS (readings, dy) or FTS__RUN_FAR_TICKS
 * (ticks, dx) from the run's start, where doubles no longer hold the ns. n: the run's
 * intervals now. 1: the run ends before the interval. */
#define FTS__RUN_MAX 64
#define FTS__RUN_SLACK_NS 20.0
#define FTS__RUN_FAR_NS 0x1p40      /* 18 min */
#define FTS__RUN_FAR_TICKS 0x1p44
int fts__estimate_rule6_run_ends(unsigned n, double e_run, double e_iv, double dx, double dy);

/* ---- rules 8-10 in fixed point (history.h's struct fts__rec) ----------------------- */
struct fts__rec;
/* A segment's line as worked out in doubles: from key to end, y0 ns (relative to oy) at
 * key and slope s ns per tick, its bound err over [key, end]; step: it holds one. */
struct fts__seg_line {
	uint64_t key, end;
	double y0, s;
	int64_t oy;
	double err;
	int step;
};
/* Rule 8: the segment as published, in fixed point: the bound widened by what the fixed
 * point and the doubles' rounding may add (2 ns and 16 units in the last place), and
 * FTS__SEG_FAST where its line fits 62 bits over [key, end]. */
void fts__estimate_rule8_rec(const struct fts__seg_line *o, struct fts__rec *r);
/* Rule 9: the line carried on from key (reading y ns relative to oy, bound err) at band
 * bd's middle rate, its bound growing by the band's half-width: *r and *grow, in one
 * fixed point. */
void fts__estimate_rule9_end(uint64_t key, int64_t oy, double y, double err, const struct fts__band *bd,
			     struct fts__rec *r, int64_t *grow);
/* Rule 10: merging segment a (from ka) with the next, b (from kb, to end): the line from
 * a's start to b's end and the bound that covers what both covered (exact for lines of
 * constant bound: the distance between two lines is largest at an end). */
void fts__estimate_rule10_merge(uint64_t ka, const struct fts__rec *a, uint64_t kb,
				const struct fts__rec *b, uint64_t end, struct fts__seg_line *o);
/* Rule 10, when: an add that may put `adding` segments after the nfinal final ones of a
 * history with room for max: 0 while they fit; else how many final segments to keep,
 * leaving a quarter of the room free (3/4 of max, fewer where the add needs more room;
 * at least 1). */
size_t fts__estimate_rule10_keep(size_t nfinal, size_t adding, size_t max);
/* Rule 10, which: of n segments (rec[i] from key[i] to key[i + 1]), the pairs of
 * neighbours to merge so that n - want remain, those whose merging widens the wider of
 * their two bounds least first, over the whole list, none across a step, no segment in
 * two pairs. taken[0..n): 1 where segment i merges with i + 1, which gets 2; 0 for the
 * rest. cand: room for n - 1 candidates. Returns the pairs taken: 0 when none can
 * merge (only steps are left, and the oldest segments go instead), fewer than want
 * when the pairs run out first. */
struct fts__merge_cand {
	double cost;
	size_t pos;
};
size_t fts__estimate_rule10_pick(const uint64_t *key, const struct fts__rec *rec, size_t n, size_t want,
				 struct fts__merge_cand *cand, unsigned char *taken);

/* Rule 11, the answers joined: what the clock read at a counter value x lies in the
 * forward extrapolation's [nf - ef, nf + ef] or the backward one's [nb - eb, nb + eb]
 * (it stepped at most once between). Where they overlap (they meet, ends included: no
 * step), the estimate is the overlap's middle; where they do not, the hull's middle;
 * the bound covers the hull. 0, or -ERANGE where the answer does not fit 64 bits.
 * Inline: the conversion of a stamp past the newest sample (history.h) takes it. */
static inline int fts__estimate_rule11_join(int64_t nf, int64_t ef, int64_t nb, int64_t eb, int64_t *ns,
					    int64_t *err)
{
	__int128 flo = (__int128)nf - ef, fhi = (__int128)nf + ef;
	__int128 blo = (__int128)nb - eb, bhi = (__int128)nb + eb;
	__int128 lo = flo < blo ? flo : blo, hi = fhi > bhi ? fhi : bhi, est;

	if (flo <= bhi && blo <= fhi) {   /* the overlap */
		__int128 olo = flo > blo ? flo : blo, ohi = fhi < bhi ? fhi : bhi;
		est = olo + (ohi - olo) / 2;
	} else {
		est = lo + (hi - lo) / 2;
	}
	hi = hi - est > est - lo ? hi - est : est - lo;
	if (est > INT64_MAX || est < INT64_MIN || hi > INT64_MAX)
		return -ERANGE;
	*ns = (int64_t)est;
	if (err)
		*err = (int64_t)hi;
	return 0;
}

/* Rule 13, the process clock: the clocks (bits 1 << enum fts__clk) that the events seen
 * between two samples moved against the counter, each clock's history told of a step
 * there: a set of the wall clock (step) moves CLOCK_REALTIME, and CLOCK_TAI unless it
 * was a leap second (tai_step); a sleep (suspend) moves REALTIME, TAI and BOOTTIME, and
 * where the counter ran through it (ran_on) MONOTONIC and MONOTONIC_RAW too, which
 * stopped. */
uint32_t fts__estimate_rule13_moved(int step, int tai_step, int suspend, int ran_on);

/* Rule 14, tagged stamps: what a read of a clock between two CLOCK_REALTIME reads does
 * to that clock's eras. */
enum fts__estimate_rule14_obs {
	FTS__OBS_NEW_ERA,   /* the first, or CLOCK_REALTIME went back: a new history */
	FTS__OBS_JOIN,      /* joins the newest era's history */
	FTS__OBS_BRIDGE,    /* too close to the newest kept: converts by rule 11 only */
};
/* A read joins the history FTS__OBS_GAP_NS (CLOCK_MONOTONIC_RAW) or more after the
 * newest kept: reads closer would give it the rate of their noise. */
#define FTS__OBS_GAP_NS 1000000
/* have_era: the clock has one, whose newest kept read's CLOCK_REALTIME bracket ends at
 * last_hi; the read's begins at lo, raw_gap ns (CLOCK_MONOTONIC_RAW) after that one. */
enum fts__estimate_rule14_obs fts__estimate_rule14_obs(int have_era, uint64_t last_hi, uint64_t lo,
						       int64_t raw_gap);
/* Rule 14, which eras may hold a stamp's reading r: an era of CLOCK_REALTIME readings
 * [first_lo, top] whose step back before it lasted gap_before ns (-1: none before it)
 * holds those from first_lo - gap_before (what CLOCK_REALTIME read in that interval
 * after the step, which the era before also read) to top. */
int fts__estimate_rule14_may_hold(uint64_t r, uint64_t first_lo, int64_t gap_before, uint64_t top);
/* Rule 14, an era of one read (the clock read v between CLOCK_REALTIME reads lo and hi)
 * has no rate of its own: what the clock read when CLOCK_REALTIME read r lies within
 * [*out_lo, *out_hi], v carried from the bracket's middle at 1:1 give or take
 * FTS__ONE_OBS_PPM, plus half the bracket and 1 ns. Any two of the clocks run within
 * that of each other: ADJ_TICK's 10 % and NTP's 500 ppm. */
#define FTS__ONE_OBS_PPM 100500
void fts__estimate_rule14_one_obs(uint64_t lo, uint64_t hi, int64_t v, uint64_t r, __int128 *out_lo,
				  __int128 *out_hi);

/* ---- rule 15: what a history can hold ---------------------------------------------- */
/* A history reaches at least this far past each end, however short it is (ns). */
#define FTS__REACH_FLOOR_NS 1000000000
/* A stamp of the live process may lie this far past the counter read its conversion
 * takes, beyond the offsets between CPUs the warp test found (ns): far above the ones it
 * cannot see (~0.6 us), far below any wrong value worth catching. */
#define FTS__REACH_AHEAD_NS 1000000
/* Rule 15, a history of counter values [first, newest] (first <= newest): is x within
 * its reach, no further before first or past newest than the history is long, or than
 * FTS__REACH_FLOOR_NS? beyond_ns: how far x lies outside, in ns at the history's rate
 * (read only when x lies further out than the history is long). */
int fts__estimate_reach_history(uint64_t first, uint64_t newest, uint64_t x, int64_t beyond_ns);
/* Rule 15, the live process: may a counter stamp have been stored since the boot and
 * before the conversion? Not if its CLOCK_MONOTONIC_RAW reading is certainly negative
 * (raw_ns + raw_err < 0), nor if it lies past the counter read the conversion takes
 * after it by ahead_ns, more than FTS__REACH_AHEAD_NS and skew_ns (the offsets between
 * CPUs found). */
int fts__estimate_reach_live(int64_t raw_ns, int64_t raw_err, int64_t ahead_ns, int64_t skew_ns);

/* v rounded to an int64, saturating at +-2^62 (0 for NaN). */
int64_t fts__estimate_round_i64(double v);

#endif /* FTS__ESTIMATE_H */
