/* health.c - judging a sample of the process clock against the ones before it (see
 * health.h and sampler.c's top comment): pure functions of their arguments. */
#include <math.h>
#include <stdio.h>

#include "health.h"

/* The counter against CLOCK_MONOTONIC_RAW: on the counter's clocksource the two are
 * one oscillator, so anything past this is the counter's fault. */
#define FAULT_PPM 500
#define FAULT_SLACK_NS 2000           /* read-position noise between the clocks */
/* Offsets between clocks smaller than this (beyond the read noise) are not events. */
#define STEP_MIN_NS 1000
#define SUSPEND_MIN_NS 1000000
/* The kernel measures a suspend with the RTC (1 s resolution) unless the clocksource
 * runs through it: a counter that ran on may differ from boottime by this much. */
#define SUSPEND_SLACK_NS 2000000000
/* Where the kernel computes its clocksource from the counter (kvm-clock, Hyper-V's TSC
 * page), CLOCK_MONOTONIC_RAW is the counter times the kernel's scale on every CPU: on a
 * kvm-clock VM the two kept within 15 ns of one line over 20 s while the reads moved
 * between CPUs. A sample that leaves the line of the samples before it by more than
 * both brackets, the rate's own uncertainty and these found the counter moved on the
 * CPU it was taken on. */
#define OFFSET_PPM 1
#define OFFSET_SLACK_NS 500
/* Below a fault, an offset is measured (the skew takes it) only where the brackets and
 * the rate leave less doubt than this: one preempted read would otherwise widen every
 * bound for good. */
#define MEASURE_MAX_NS 250

/* The counter against CLOCK_MONOTONIC_RAW is told from RAW's own bracket (one clock
 * read: under a sanitizer or on a slow machine the four health reads take several
 * times as long, and an offset between CPUs is told to within the bracket); the
 * offsets between the clocks (a step, a sleep), from the health reads, taken
 * together. */
static long double rmid(const struct fts__psample *s)
{
	const struct fts__cbracket *r = &s->k[FTS__CLK_RAW];
	return (long double)r->b + (long double)(r->a - r->b) / 2;
}

static long double rwidth(const struct fts__psample *s)
{
	return (long double)(s->k[FTS__CLK_RAW].a - s->k[FTS__CLK_RAW].b);
}

enum fts__verdict fts__health_judge(const struct fts__health *h, const struct fts__psample *s,
				    int watch_offsets, const char *cpu_note, struct fts__seen *e,
				    char *why, size_t len)
{
	const struct fts__psample *last = &h->last;
	const long double ticks_per_ns = h->ticks_per_ns, ticks_per_ns_err = h->ticks_per_ns_err;
	long double ws, wl, rs, rl, npt, noise, dsusp, dstep, dtai, dc, draw;
	int ran_on = 0;

	*e = (struct fts__seen){ 0 };
	if (!h->have_last)
		return FTS__HEALTHY;
	if (s->b < last->a) {
		snprintf(why, len, "counter went backwards by %llu ticks",
			 (unsigned long long)(last->a - s->b));
		return FTS__FAULT_DROP;
	}
	ws = (long double)(s->ha - s->hb);
	wl = (long double)(last->ha - last->hb);
	rs = rwidth(s);
	rl = rwidth(last);
	dc = rmid(s) - rmid(last);
	draw = (long double)(s->k[FTS__CLK_RAW].ns - last->k[FTS__CLK_RAW].ns);
	/* ns per tick: known, or this interval's own */
	npt = ticks_per_ns > 0 ? 1 / ticks_per_ns : dc > 0 && draw > 0 ? draw / dc : 1;
	noise = (ws + wl) * npt + FAULT_SLACK_NS;
	dsusp = (long double)((s->clk.boot - s->clk.mono) - (last->clk.boot - last->clk.mono));
	dstep = (long double)((s->clk.rt - s->clk.boot) - (last->clk.rt - last->clk.boot));
	dtai = (long double)((s->clk.tai - s->clk.boot) - (last->clk.tai - last->clk.boot));
	if (ticks_per_ns > 0) {
		long double expect = draw * ticks_per_ns;
		long double tol = expect * (FAULT_PPM * 1e-6L + ticks_per_ns_err) + rs + rl +
				  FAULT_SLACK_NS * ticks_per_ns;
		int suspended = dsusp > SUSPEND_MIN_NS + noise;

		if (fabsl(dc - expect) > tol) {
			long double most = (draw + dsusp + SUSPEND_SLACK_NS) * ticks_per_ns;
			if (!suspended || dc < expect || dc > most + tol) {
				snprintf(why, len, "counter left its rate against "
					 "CLOCK_MONOTONIC_RAW by %.0f ppm%s",
					 (double)(expect > 0 ? (dc - expect) / expect * 1e6L : dc),
					 cpu_note);
				return FTS__FAULT_KEEP;
			}
			ran_on = 1;   /* it counted through the suspend */
		}
		tol = rs + rl + expect * (ticks_per_ns_err + OFFSET_PPM * 1e-6L) +
		      OFFSET_SLACK_NS * ticks_per_ns;
		if (!ran_on && !suspended && watch_offsets && fabsl(dc - expect) > tol) {
			snprintf(why, len, "counter moved %.0f ns against "
				 "CLOCK_MONOTONIC_RAW%s", (double)((dc - expect) / ticks_per_ns),
				 cpu_note);
			return FTS__FAULT_KEEP;
		}
		/* below the fault: how far the counter may have moved, at most, where the
		 * brackets and the rate can tell */
		long double unsure = (rs + rl) / 2 + expect * ticks_per_ns_err;
		if (!ran_on && !suspended && watch_offsets && unsure <= MEASURE_MAX_NS * ticks_per_ns)
			e->moved_ns = (int64_t)ceill((fabsl(dc - expect) + unsure) / ticks_per_ns);
	}
	e->suspend = dsusp > SUSPEND_MIN_NS + noise;
	e->step = fabsl(dstep) > STEP_MIN_NS + noise;
	e->tai_step = fabsl(dtai) > STEP_MIN_NS + noise;
	e->ran_on = ran_on;
	e->suspend_ns = (int64_t)dsusp;
	e->step_ns = (int64_t)dstep;
	e->awake_ns = (int64_t)draw;
	return FTS__HEALTHY;
}

void fts__health_learn(struct fts__health *h, const struct fts__psample *s,
		       const struct fts__seen *e)
{
	if (!h->have_last || e->ran_on) {
		h->anchor = *s;   /* the first, or past a sleep the counter ran through */
		return;
	}
	if (s->k[FTS__CLK_RAW].ns - h->anchor.k[FTS__CLK_RAW].ns >= 1000000) {
		long double span = rmid(s) - rmid(&h->anchor);
		h->ticks_per_ns = span / (long double)(s->k[FTS__CLK_RAW].ns -
						       h->anchor.k[FTS__CLK_RAW].ns);
		h->ticks_per_ns_err = (rwidth(s) + rwidth(&h->anchor)) / span;
	}
}
