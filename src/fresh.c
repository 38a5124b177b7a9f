/* fresh.c - rule 12: the fresh line, made from a clock read after the tail, stored
 * for every thread to read (fresh.h), renewed from later reads, and dropped with the
 * process clock's view. Depends on the process clock's view and reads (clock.h) and the
 * history's read side only; the process clock calls it back through the hook it is
 * given (fts__clock_on_round), never by name.
 *
 * A stamp past the newest sample needs a clock read after it (rule 11). One read serves
 * the stamps after it too, while the kernel computes the clock as it did then. It
 * changes how only at a timekeeping update (a tick, a step, a new rate), and every
 * update moves CLOCK_REALTIME_COARSE, the clock at the last one: while that reads as it
 * did before the read, the clock ran on since on one line, with no step, at a rate in
 * the tail's band (P2). What it read at a later stamp then lies on the read's line
 * carried on at the band, which lies inside the bridge's estimate and bound at the
 * read carried on the same way: one line, est = r0 + (x - c0) * mult, bound = err +
 * |x - c0| * grow (+ 1 ns of rounding). For up to FRESH_SPAN_NS after a read (the
 * kernel updates every few ms while a CPU is busy), and while the bound has grown by
 * less than FRESH_GROW_NS (the line's rate may be off by the growth), a stamp converts by that line and
 * one coarse clock read: no counter read, no look-up, no bridge, and a sorted batch
 * costs one multiply a stamp. Stamps between the newest sample and the read bridge to
 * the read itself. The line is made by a conversion that reads the clock
 * (fts__fresh_read_after) and shared by every thread: readers only read it; a change
 * of the process clock's view (a new history or source, a fault, new offsets between
 * CPUs) bumps its generation, and a line of an older generation is not used. */
#include <stdint.h>

#include "clock.h"
#include "fresh.h"
#include "history.h"
#include "internal.h"

#define FRESH_SPAN_NS 10000000
#define FRESH_GROW_NS 50
#define FRESH_CHAIN_NS 100000000   /* the sampler's period */
#define FRESH_TRIES 3              /* a line from the narrowest of this many reads */

/* The last counter value a chain of renewals from tail's key may bridge from:
 * FRESH_CHAIN_NS in ticks at its rate, in a 64-bit division (no call into the 128-bit
 * one's code, for the renewal's path), the rate's bits past 2^-36 ns a tick dropped;
 * 0 for a rate that is not one. */
static inline uint64_t chain_end_of(const struct fts__line *tail)
{
	uint32_t drop = tail->shift > 36 ? tail->shift - 36 : 0;
	uint64_t m = tail->mult > 0 && tail->shift <= 62 ? (uint64_t)tail->mult >> drop : 0;

	return m ? tail->c0 + ((uint64_t)FRESH_CHAIN_NS << (tail->shift - drop)) / m : 0;
}

/* No line yet: made 1, a generation not yet seen (it starts at 0). */
_Static_assert(sizeof(struct fts__fresh) <= 128, "a fresh line is two cache lines");
#define NO_LINE { .made = 1, .narrowest = UINT64_MAX }
struct fts__fresh_lines fts__fresh_lines FTS__HOT_DATA = {
	.line = { NO_LINE, NO_LINE, NO_LINE, NO_LINE, NO_LINE },
};

/* Line k becomes v (its fields but seq and narrowest), under its seqcount; not if
 * another thread writes it now. */
static inline __attribute__((always_inline)) void store(int k, const struct fts__fresh *v)
{
	struct fts__fresh *fr = &fts__fresh_lines.line[k];
	unsigned s = FTS__LD(fr->seq);

	if ((s & 1) || !__atomic_compare_exchange_n(&fr->seq, &s, s + 1, 0, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED))
		return;   /* another thread writes one now */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	FTS__ST(fr->shift, v->shift);
	FTS__ST(fr->c0, v->c0);
	FTS__ST(fr->c1, v->c1);
	FTS__ST(fr->epoch, v->epoch);
	FTS__ST(fr->r0, v->r0);
	FTS__ST(fr->mult, v->mult);
	FTS__ST(fr->grow, v->grow);
	FTS__ST(fr->err, v->err);
	FTS__ST(fr->read_r0, v->read_r0);
	FTS__ST(fr->read_err, v->read_err);
	FTS__ST(fr->skew, v->skew);
	FTS__ST(fr->chain_end, v->chain_end);
	FTS__ST(fr->made, v->made);
	__atomic_store_n(&fr->seq, s + 2, __ATOMIC_RELEASE);
}

/* Store rule 12's line for counter values from read->c0 on: the bridge (rule 11)
 * between the tail and the clock read *read at the read's middle, carried on at the
 * rate of the segment rate (NULL: the tail's), its bound growing by the tail's band
 * around it, plus skew; epoch: the source's timekeeping epoch read before the read;
 * gen: fts__clock_gen() before the state the line was made from was looked at;
 * chain_end: the last counter value a line renewed from this one may bridge from (0:
 * FRESH_CHAIN_NS after the tail's key). */
FTS__HOT static void publish(int k, const struct fts__line *tail, const struct fts__line *rate,
			     const struct fts__line *read, int64_t epoch, int64_t skew, unsigned gen,
			     uint64_t chain_end)
{
	int64_t n0, e0, mult = tail->mult, grow = tail->grow;
	uint64_t span;

	if (tail->mult <= 0 || tail->shift > 62 || tail->grow < 0 || skew < 0 ||
	    fts__bridge(tail, read, read->c0, &n0, &e0) < 0)
		return;
	/* The rate: the newest segment's, measured over its run (the band's middle is the
	 * middle of what one interval allows), in the tail's fixed point; the growth covers
	 * the band around the tail's rate from there. */
	if (rate && rate->shift <= tail->shift && rate->mult > 0 && !(rate->flags & FTS__SEG_STEP)) {
		__int128 m = (__int128)rate->mult << (tail->shift - rate->shift);
		__int128 d = m > tail->mult ? m - tail->mult : tail->mult - m;
		if (m < INT64_MAX && d < (__int128)tail->grow * 4) {
			mult = (int64_t)m;
			grow = tail->grow + (int64_t)d + 1;
		}
	}
	/* FRESH_SPAN_NS, or less where the band is wide (a short newest interval): the
	 * line leaves the truth by at most its growth, and keeps it under FRESH_GROW_NS */
	span = (uint64_t)(((unsigned __int128)FRESH_SPAN_NS << tail->shift) / (uint64_t)mult);
	if (grow > 0 && (unsigned __int128)span * (uint64_t)grow >
			(unsigned __int128)FRESH_GROW_NS << tail->shift)
		span = (uint64_t)(((unsigned __int128)FRESH_GROW_NS << tail->shift) / (uint64_t)grow);
	/* one multiply over the span, and bounds far from overflow */
	if (span > (UINT64_C(1) << 40) || read->c0 > FTS_STAMP_CLOCK_TAG - span ||
	    !fts__seg_fast(n0, mult, tail->shift, span) || e0 > INT64_C(1) << 60 ||
	    skew > INT64_C(1) << 60 || read->err > UINT64_C(1) << 60 ||
	    fts__mulshift(span, grow, tail->shift) > (__int128)1 << 60)
		return;
	store(k, &(struct fts__fresh){ .made = gen, .shift = tail->shift, .c0 = read->c0,
				       .c1 = read->c0 + span, .epoch = epoch, .r0 = n0, .mult = mult,
				       .grow = grow, .err = (uint64_t)e0, .read_r0 = read->r0,
				       .read_err = read->err, .skew = skew,
				       .chain_end = chain_end ? chain_end : chain_end_of(tail) });
}

/* Is this read's bound narrow enough to serve the next stamps? Within twice the
 * narrowest seen: the first read after idle is slow, its bracket wide, and a line
 * through it would carry that uncertainty for milliseconds. */
FTS__HOT static int narrow(int k, uint64_t err)
{
	uint64_t n = __atomic_load_n(&fts__fresh_lines.line[k].narrowest, __ATOMIC_RELAXED);

	if (err < n)
		__atomic_store_n(&fts__fresh_lines.line[k].narrowest, n = err, __ATOMIC_RELAXED);
	return err <= 2 * n;
}

/* After a read that agreed with fwd, taken after generation gen was read: the epoch and
 * the narrowest of a few reads more make the line, if that one is as narrow as the
 * narrowest seen. A conversion calls it only after a read that was narrow (a warm one):
 * the first read after idle is not, and reads no more than the clock. The sampler,
 * after each round, calls it whatever its own read was: the line it makes from the new
 * tail carries the chain on (FRESH_CHAIN_NS). */
FTS__PATH(7) static void make(int k, const struct fts__line *fwd, const struct fts__line *rate,
			  unsigned gen, uint64_t chain_end)
{
	struct fts__line best = { .err = UINT64_MAX }, again;
	int64_t epoch;

	/* The epoch before the reads the line is made from. The line serves milliseconds
	 * of stamps: the narrowest of a few reads. */
	if (fts__clock_epoch(&epoch) < 0)
		return;
	for (int i = 0; i < FRESH_TRIES; i++)
		if (fts__clock_read(k, fwd, &again) == 0 && again.err < best.err)
			best = again;
	if (best.err != UINT64_MAX && narrow(k, best.err))
		publish(k, fwd, rate, &best, epoch, fts__clock_skew_ns(), gen, chain_end);
}

/* The newest segment of h, whose key is the tail's, for the line's rate; NULL if none. */
static const struct fts__line *rate_of(const struct fts_calib *h, const struct fts__line *tail,
				       struct fts__line *seg)
{
	return fts__calib_find(h, tail->c0, seg) == 0 ? seg : NULL;
}

void fts__fresh_rebase(void)
{
	for (int k = 0; k < FTS__NCLK; k++) {
		const struct fts_calib *h = fts__clock_history(k);
		unsigned gen = fts__clock_gen();
		struct fts__line tail, m, seg;
		int64_t p, bound;
		uint64_t newest;

		if (!h || !(newest = fts__calib_newest_counter(h)) ||
		    fts__calib_find(h, newest + 1, &tail) != 1 || fts__clock_read(k, &tail, &m) < 0 ||
		    fts__line_convert(&tail, 1, m.c0, &p, &bound) < 0 ||
		    (p > m.r0 ? p - m.r0 : m.r0 - p) > bound + (int64_t)m.err)
			continue;
		make(k, &tail, rate_of(h, &tail, &seg), gen, 0);
	}
}

__attribute__((constructor)) static void rebase_after_rounds(void)
{
	fts__clock_on_round(fts__fresh_rebase);
}

/* The line's arithmetic, one copy for the renewal's three uses: after idle, each line of
 * code is a miss (three inlined copies were 18 lines more). */
FTS__PATH(2) __attribute__((noinline)) static int line_convert(const struct fts__line *l,
							   int where, uint64_t x, int64_t *ns,
							   int64_t *err)
{
	return fts__line_convert(l, where, x, ns, err);
}

/* The chain ended: the history's newest tail for x in *fwd, the chain from its key in
 * *chain_end, the offsets between CPUs now in *skew; 0 if x is not past it, or too far
 * past. Out of line: the renewal's common path does not run through it. */
FTS__PATH(2) __attribute__((noinline)) static int from_tail(int k, uint64_t x,
							struct fts__line *fwd,
							uint64_t *chain_end, int64_t *skew)
{
	const struct fts_calib *h = fts__clock_history(k);

	if (!h || !fts__calib_tail(h, x, fwd) || !(*chain_end = chain_end_of(fwd)))
		return 0;
	*skew = fts__clock_skew_ns();
	return x <= *chain_end;
}

/* The history's newest tail fwd, which a renewal bridged from (the chain from its key
 * ending at chain_end), kept as line k for the renewals after it: one that serves no
 * stamp itself (c1 before c0: no clock read after the tail stands behind it), whose
 * line is the tail's and whose read is the tail at its key, which the history gives as
 * surely as a read. A process attached to faststamp serve, whose rounds make no line,
 * then reads serve's history once a chain, not at every conversion after idle. */
FTS__PATH(2) __attribute__((noinline)) static void keep(int k, const struct fts__line *fwd,
							uint64_t chain_end, int64_t skew,
							unsigned gen)
{
	if (!fwd->c0 || fwd->mult <= 0 || fwd->shift > 62 || fwd->grow < 0 || skew < 0 ||
	    fwd->err > UINT64_C(1) << 60)
		return;
	store(k, &(struct fts__fresh){ .made = gen, .shift = fwd->shift, .c0 = fwd->c0,
				       .c1 = fwd->c0 - 1, .r0 = fwd->r0, .mult = fwd->mult,
				       .grow = fwd->grow, .err = fwd->err, .read_r0 = fwd->r0,
				       .read_err = fwd->err, .skew = skew, .chain_end = chain_end });
}

/* A stamp past the line after the kernel updated the clock (the first conversion after
 * a few ms of idle, most often): the line stands for the tail (it is the tail's band
 * carried on from a read), and a read now bridges from it (rule 11), without the
 * history's pages. The read agrees with the line (else a step or new rate: the history
 * takes it, convert.c) and becomes the next line; lines renewed so carry on from the
 * tail's key for at most FRESH_CHAIN_NS. Past that, the history's newest tail takes the
 * line's place, as the history's path would bridge from it (fts__fresh_read_after), and
 * the chain goes on from its key: the sampler makes a line from each new tail of its
 * own, but no round of this process does for the machine's shared history. */
FTS__PATH(2) int fts__fresh_renew(int k, const struct fts__fresh_view *f, uint64_t x, int64_t *ns, int64_t *err)
{
	struct fts__line read, fwd = f->line;
	int64_t p, bound, nf, ef, nb, eb, skew = f->skew;
	uint64_t chain_end = f->chain_end;
	unsigned gen = fts__clock_gen();
	int took = x > chain_end;

	if (took && !from_tail(k, x, &fwd, &chain_end, &skew))
		return 0;
	fwd.flags = 0;
	/* the bridge (fts__bridge) from the line to the read, spelled out to call one copy */
	if (x < fwd.c0 || fts__clock_read(k, &fwd, &read) < 0 || read.c0 < x ||
	    line_convert(&fwd, 1, read.c0, &p, &bound) < 0 ||
	    (p > read.r0 ? p - read.r0 : read.r0 - p) > bound + (int64_t)read.err ||
	    line_convert(&fwd, 1, x, &nf, &ef) < 0 || line_convert(&read, -1, x, &nb, &eb) < 0 ||
	    fts__estimate_rule11_join(nf, ef, nb, eb, ns, err) < 0)
		return 0;
	if (err)
		*err = *err > INT64_MAX - skew ? INT64_MAX : *err + skew;
	/* after idle the read is not narrow, and make() is not called (nor brought in); a
	 * tail just taken is kept instead, for the renewals after it */
	if (narrow(k, read.err))
		make(k, &fwd, NULL, gen, chain_end);
	else if (took)
		keep(k, &fwd, chain_end, skew, gen);
	return 1;
}

FTS__HOT int fts__fresh_read_after(int k, uint64_t x, struct fts__line *m)
{
	const struct fts_calib *h = fts__clock_history(k);
	struct fts__line tail;
	int64_t p, bound;

	for (int round = 0; h; round++) {
		/* what the line is made from is looked at after this */
		unsigned gen = fts__clock_gen();
		int kept;

		/* a counter found faulty is not read again: the tail alone */
		if (fts__calib_find(h, x, &tail) <= 0 || fts__clock_read(k, &tail, m) < 0)
			return 0;   /* inside the history; or nothing to read: the tail alone */
		/* Did the clock keep the extrapolation? Then the bridge's estimate is the tail's,
		 * and the read serves the stamps after it. */
		if (fts__line_convert(&tail, 1, m->c0, &p, &bound) < 0)
			return 1;
		kept = (p > m->r0 ? p - m->r0 : m->r0 - p) <= bound + (int64_t)m->err;
		if (kept && narrow(k, m->err)) {
			struct fts__line seg;
			make(k, &tail, rate_of(h, &tail, &seg), gen, 0);
		}
		/* It left it (a step, a new rate): a sample now in a history of the
		 * process's own, so that x lies inside it, between samples that hold the
		 * change. */
		if (kept || round || !fts__clock_sample_to(k, h, x))
			return 1;
	}
	return 0;
}
