/* clock.h - clock.c's interface: the process clock (its histories of every clock, the
 * sampler, the shared history, faststamp serve), its object's hot part and its
 * fault-injection seam. Declares clock.c's functions alone. Not installed. */
#ifndef FTS__CLOCK_H
#define FTS__CLOCK_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "attach.h"
#include "clk.h"
#include "hwsource.h"
#include "internal.h"

/* The process clock is one object, fts__clock_pc (clockobj.c; kernel's tk_core is the
 * model): this hot part first, cache-aligned, which conversions read without the lock,
 * then a cold part under the lock (clockobj.h). Each field of the hot part has one access
 * rule, stated beside it; the accessors (below and in clockobj.h) carry it. Nothing
 * writes a field plainly that is read atomically. */
struct fts__clock_hot {
	/* Each clock's history (enum fts__clk), fed by the same samples: set once under
	 * the lock with a release store, read anywhere with acquire; reset in place
	 * (fts__calib_reset), never replaced. First: indexed at the object's address. */
	_Alignas(64) struct fts_calib *hists[FTS__NCLK];
	/* Bumped under the lock with a release add; read anywhere with acquire
	 * (fts__clock_gen): what conversions see changed (the histories in view, the
	 * source, a fault, the offsets between CPUs); what was made from an older one
	 * (rule 12's line, fresh.h) is not used. */
	unsigned generation;
	/* Set by any thread with a relaxed store, taken by the sampler with a relaxed
	 * exchange: a conversion happened since its last round. */
	int used;
	/* Written under the lock with relaxed atomic stores; read anywhere relaxed: */
	int faulted;              /* the counter was found faulty (new stamps use the clock) */
	int running;              /* the sampler thread of this source exists */
	uint64_t period_ticks;    /* without a sampler, a conversion samples a history older
				   * than this (0 until the rate is known) */
	int64_t skew_ns;          /* fts__clock_skew_ns() of the process's own history */
	uint64_t res_ticks;       /* the clocks' resolution in counter ticks: every read's
				   * bracket begins this much earlier (rule 1; 0: fine) */
	uint64_t taken;           /* samples added */
	/* What the clock reads: replaced by fts__clock_set_source alone, under the lock,
	 * while no conversion runs (a test's seam); read anywhere plainly. */
	struct fts__source src;
	/* The shared history as conversions read it: attach.h's rule. */
	struct fts__attached attach;
};
/* Declared incomplete here: its hot part is its first member, reached by
 * fts__clock_hot(), a constant address (no load). */
struct fts__clock;
extern struct fts__clock fts__clock_pc;
static inline struct fts__clock_hot *fts__clock_hot(void)
{
	return (struct fts__clock_hot *)(void *)&fts__clock_pc;
}
static inline unsigned fts__clock_gen(void)
{
	return __atomic_load_n(&fts__clock_hot()->generation, __ATOMIC_ACQUIRE);
}

/* Replace the process clock's source (NULL: the real hardware) and drop the history
 * and any fault. For tests; not safe against concurrent conversions. */
void fts__clock_set_source(const struct fts__source *src);
/* Take one sample now (best of a few tries). 0 or negative errno (-EIO: the counter
 * is found faulty, or was before). */
int fts__clock_sample(void);
/* What the sampler thread does at each sampling round: retry a warp test that could
 * not run, when due; move to the next CPU the counter is proven on (where it needs
 * the proof); then fts__clock_sample(). */
int fts__clock_round(void);
/* Prove the counter across CPUs now, if it needs it and is not yet (warp.h): what the
 * first calibration does first. 0, or a negative errno (the test could not run). */
int fts__clock_prove(void);
/* What is added to the bound of every counter stamp for the counter's offsets between
 * CPUs, in ns: 0 where the kernel vouches for the counter or the proof saw no warp;
 * -1 while the proof could not run (counter stamps cannot be converted). */
int64_t fts__clock_skew_ns(void);
/* What the sampler does every round: has the kernel left the clocksource it had when
 * the counter was chosen? Then a last sample is taken and the counter is no longer
 * trusted. 0, or -EIO if so. */
int fts__clock_watch(void);
/* Ready the history to convert counter values up to newest (see clock.c). */
int fts__clock_prepare(uint64_t newest);
struct fts__line;
/* Below, k is a clock (enum fts__clk).
 * A clock read now, bracketed by counter reads, as a line at fwd's band (the bridge's
 * backward line, rule 11): 0, or -1 (no read: the counter is faulty, or a read failed). */
int fts__clock_read(int k, const struct fts__line *fwd, struct fts__line *m);
/* When h is the process's own history of clock k: a sample now, unless one since
 * reaches x; 1. 0 when h is not its own (the shared one). */
int fts__clock_sample_to(int k, const struct fts_calib *h, uint64_t x);
/* fn is called by the sampler thread after each round, with the lock held (fresh.c:
 * rule 12's lines from the new tails). Set once, before a sampler runs. */
void fts__clock_on_round(void (*fn)(void));
/* The source's timekeeping epoch now (struct fts__source's epoch). 0, or -1: not
 * known. */
int fts__clock_epoch(int64_t *e);


/* The histories conversions use: cur, and old, the one used before cur (a copy of a
 * shared history the clock left), or NULL. */
struct fts__clock_view {
	const struct fts_calib *cur, *old;
};
void fts__clock_view(int k, struct fts__clock_view *v);
/* 1 when the history in use holds clock k: a process's own holds every clock; the
 * shared one (faststamp serve) CLOCK_REALTIME alone. */
int fts__clock_holds(int k);
/* Stop using the shared history (why: for fts_get_info); 1 if the clock left it. */
int fts__clock_leave_shared(const char *why);
/* Which history conversions use ("shared" or "process"), its path (the shared
 * history's socket, or the one this process publishes at), and why the shared one is not used. */
void fts__clock_sharing(char *source, size_t slen, char *path, size_t plen, char *note,
			size_t nlen);
/* faststamp serve: make the process clock's history the machine's, published at path,
 * sampled every interval_ns. 0, or -1 with the reason in err. */
int fts__clock_serve(const char *path, int64_t interval_ns, char *err, size_t errlen);
/* Stop publishing (the memory says it stopped, and why; the socket goes). */
void fts__clock_serve_stop(const char *why);
/* What the publisher's answering thread said since *seq (shared.h): 1 with the note in
 * buf, 0 if nothing new; *failed: it cannot publish at its path any more. */
int fts__clock_serve_news(unsigned *seq, char *buf, size_t len, int *failed);
/* The counter now, as the process clock reads it; 0 once it is found faulty (it is not
 * read again). */
uint64_t fts__clock_counter_now(void);
int fts__clock_uses_hw(void);
/* A trace's history (record.h's tap): the clock calibrated from this process's own
 * samples, the tap started and two samples 2 ms apart taken into it. *h: what the
 * history is of. 0 (also with no counter in use: stamps are clock readings, nothing to
 * tap), or negative errno. */
struct fts__head;
int fts__clock_tap_start(struct fts__head *h);
/* The tap's blocks since the last take (fts__record_tap_take); sample: one sample first,
 * so that the stamps before it lie inside the history. */
size_t fts__clock_tap_take(unsigned char **buf, int sample);
void fts__clock_tap_stop(void);
/* The kernel's clocksource now (through the source's seam). 0 or negative errno. */
int fts__clock_clocksource(char *out, size_t len);
uint64_t fts__clock_samples_taken(void);
const struct fts_calib *fts__clock_history(int k);
struct fts__clock_state {
	uint64_t samples_taken, steps, suspends;
	int running, faulted;
	int threads;   /* sampler threads alive, also of sources replaced since */
	uint64_t thread_starts;   /* attempts to start one */
	int64_t ambiguous_ns;
	char fault[160];
	char proof[200];          /* the counter across CPUs: not needed, or the result */
	int64_t skew_ns;          /* fts__clock_skew_ns() */
	int64_t res_ns;           /* the clocks' resolution found (resolution.c), 0: fine */
	int64_t period_ns;        /* the sampling period of the history in use: the
				   * publisher's when attached, else this process's */
};
void fts__clock_state(struct fts__clock_state *st);

#endif /* FTS__CLOCK_H */
