/* fresh.h - fresh.c's interface: rule 12's line, which fresh.c makes, stores and renews,
 * and which conversions (convert.c) check and use through the inline reads below, the
 * hot path. A line is of one generation of the process clock's view (fts__clock_gen):
 * a change of what conversions see drops it. Not installed. */
#ifndef FTS__FRESH_H
#define FTS__FRESH_H

#include <stdint.h>

#include "clock.h"
#include "history.h"
#include "internal.h"

/* One line a clock (enum fts__clk), two cache lines each, under a seqcount of its own:
 * written by whichever thread makes it (fresh.c), read by every conversion. */
struct fts__fresh {
	_Alignas(64) unsigned seq;   /* odd while being written */
	unsigned made;               /* the view's generation the line was made in */
	uint32_t shift;
	uint64_t c0, c1;             /* the counter values it serves; c0: the read's middle */
	int64_t epoch;               /* the source's timekeeping epoch before the read */
	int64_t r0, mult, grow;      /* the line: the bridge's estimate at c0, the tail's rate */
	uint64_t err;                /* the bridge's bound at c0 */
	int64_t read_r0;             /* the read itself: its reading and bound at c0 */
	uint64_t read_err;
	int64_t skew;                /* offsets between CPUs, when it was made */
	uint64_t chain_end;          /* renewals bridge from it up to here */
	uint64_t narrowest;          /* a hint, outside the seqcount: the narrowest read bound
				      * seen of the clock, in the line a renewal reads anyway */
};
/* fresh.c's one object, in the hot data section beside the process clock's hot part.
 * Its rule: any thread reads and writes every field with relaxed atomic accesses; a
 * line is whole only between two equal even reads of its seq (fts__fresh_load), and one
 * writer at a time makes it odd, by compare-exchange (fresh.c). Each line's narrowest is
 * a hint (the narrowest read bound seen of its clock), never checked against anything. Not
 * the process clock's: it has its own protocol, needs no reset (a line of an older
 * generation is not used), and clock.c must not know it (fresh.c is above it). */
struct fts__fresh_lines {
	struct fts__fresh line[FTS__NCLK];
};
extern struct fts__fresh_lines fts__fresh_lines;

/* A private copy of a fresh line. */
struct fts__fresh_view {
	struct fts__line line, read;
	int64_t epoch, skew;
	uint64_t chain_end;
};

/* The first counter value clock k's line may serve (a read without the seqcount: a
 * hint, checked by fts__fresh_load). */
static inline uint64_t fts__fresh_from(int k)
{
	return FTS__LD(fts__fresh_lines.line[k].c0);
}

/* A whole copy of clock k's line of this generation: 1; 0 if there is none. */
FTS__PATH(1) static inline int fts__fresh_load(int k, struct fts__fresh_view *f)
{
	const struct fts__fresh *fr = &fts__fresh_lines.line[k];
	unsigned s = __atomic_load_n(&fr->seq, __ATOMIC_ACQUIRE);

	if ((s & 1) || FTS__LD(fr->made) != fts__clock_gen())
		return 0;
	f->line.c0 = f->read.c0 = FTS__LD(fr->c0);
	f->line.c1 = f->read.c1 = FTS__LD(fr->c1);
	f->line.shift = f->read.shift = FTS__LD(fr->shift);
	f->line.mult = f->read.mult = FTS__LD(fr->mult);
	f->line.grow = f->read.grow = FTS__LD(fr->grow);
	f->line.r0 = FTS__LD(fr->r0);
	f->line.err = FTS__LD(fr->err);
	f->read.r0 = FTS__LD(fr->read_r0);
	f->read.err = FTS__LD(fr->read_err);
	f->line.flags = FTS__SEG_FAST;
	f->read.flags = 0;
	f->epoch = FTS__LD(fr->epoch);
	f->skew = FTS__LD(fr->skew);
	f->chain_end = FTS__LD(fr->chain_end);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return FTS__LD(fr->seq) == s;
}

/* Has the kernel kept computing the clock as at the line's read? */
FTS__PATH(1) static inline int fts__fresh_kept(const struct fts__fresh_view *f)
{
	int64_t epoch;

	return fts__clock_epoch(&epoch) == 0 && epoch == f->epoch;
}

/* Does the line serve counter value x? */
static inline int fts__fresh_covers(const struct fts__fresh_view *f, uint64_t x)
{
	return x >= f->line.c0 && x <= f->line.c1;
}

/* Rule 12's line at x, covered (err may be NULL). Its maker checked that nothing
 * overflows over the span. */
FTS__PATH(1) static inline void fts__fresh_at(const struct fts__fresh_view *f, uint64_t x, int64_t *ns,
					  int64_t *err)
{
	*ns = fts__line_at(&f->line, x);
	if (err)
		*err = (int64_t)(f->line.err + (uint64_t)fts__mulshift(x - f->line.c0, f->line.grow,
								     f->line.shift) + 1);
}

/* A stamp x past line f after the kernel updated the clock: a clock read now bridges
 * from the line (rule 11) and, agreeing with it, becomes the next line. 1 with *ns and
 * *err (err may be NULL; the offsets between CPUs included); 0 if not converted so. */
int fts__fresh_renew(int k, const struct fts__fresh_view *f, uint64_t x, int64_t *ns, int64_t *err);
/* For the newest stamp x of a conversion, past the newest sample: a clock read now,
 * after x, as a line for the bridge in *m; 1 if taken (and, where the clock kept the
 * tail's extrapolation, a new line made from it). When the clock left it, a private
 * history first takes a sample (x may then lie inside it: 0). */
int fts__fresh_read_after(int k, uint64_t x, struct fts__line *m);
/* The sampler's hook after each round (fts__clock_on_round): a line from each clock's
 * new tail, whatever its own first read (a slow one too), so that the chain of renewals
 * goes on from the newest sample and conversions renew it without the history's pages.
 * The tests call it as the hook would. */
void fts__fresh_rebase(void);

#endif /* FTS__FRESH_H */
