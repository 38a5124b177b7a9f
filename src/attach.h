/* attach.h - attach.c's interface: the machine's shared history (shared.h) in the
 * process clock, and publishing it (faststamp serve). attach.c owns no state and calls
 * nothing of the process clock: its state is two members of the process clock's object
 * (clock.h), handed to every call, and what it needs of the clock comes as arguments
 * (struct fts__attach_clock). Its caller, clock.c, holds the process clock's lock across
 * every call that takes a struct fts__attach; the inline reads below take no lock. Not
 * installed. */
#ifndef FTS__ATTACH_H
#define FTS__ATTACH_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "clk.h"
#include "histfile.h"
#include "shared.h"

/* What looking for the shared history asks of the process clock (only when it looks). */
struct fts__attach_clock {
	int (*counter_in_use)(void);   /* is the hardware's counter in use for new stamps? */
	void (*clock_id)(struct fts__head *h, int with_hz);   /* what its history is of */
	int (*needs_proof)(void);      /* does the counter need the proof across CPUs? */
	uint64_t (*counter)(void);     /* its counter now */
};

/* What conversions read of it, without the lock (in the process clock's hot part).
 * Written under the caller's lock: shared before attached, which is stored with
 * release and read with acquire (fts__attach_in_use) before shared is read; frozen[k]
 * stored with release, read with acquire (fts__attach_frozen). */
struct fts__attached {
	int attached;                          /* shared.views are in use */
	struct fts_calib *frozen[FTS__NCLK];   /* copies of them, taken on leaving */
	struct fts__shared shared;             /* the machine's history, while in use */
};
/* The rest, under the caller's lock alone. */
struct fts__attach {
	int tried;             /* looked for (or never to look) */
	char path[256];        /* the shared history looked for */
	char note[240];        /* why it is not used, "" while it is */
	/* A publisher (faststamp serve): the history lies in its sealed memory. */
	struct fts__publisher publisher;
};

/* 1 while the process converts with the shared history. */
static inline int fts__attach_in_use(const struct fts__attached *a)
{
	return __atomic_load_n(&a->attached, __ATOMIC_ACQUIRE);
}
/* The shared history of clock k (NULL: the memory holds none), valid while in use and
 * after (the mapping stays). */
static inline const struct fts_calib *fts__attach_view(const struct fts__attached *a, int k)
{
	return a->shared.views[k];
}
/* The copy of it taken on leaving it, or NULL. */
static inline const struct fts_calib *fts__attach_frozen(const struct fts__attached *a, int k)
{
	return __atomic_load_n(&a->frozen[k], __ATOMIC_ACQUIRE);
}
/* In use: the publisher's offsets between CPUs. */
static inline int64_t fts__attach_skew_ns(const struct fts__attached *a)
{
	return a->shared.head->skew_ns;
}

/* A new source: the shared history left (its copies dropped) and looked for again by
 * the next conversion, as at the start; a publisher stays. */
void fts__attach_reset(struct fts__attached *a, struct fts__attach *s);
/* Before a history is made (own: the process has its own already): the first call
 * looks for the shared history. 1 while the process uses it. */
int fts__attach_locked(struct fts__attached *a, struct fts__attach *s, int own,
		       const struct fts__attach_clock *c);
/* Never look for it (a recorder, a publisher). */
void fts__attach_never(struct fts__attach *s);
/* Stop using it (why: for fts_get_info), keeping a copy of each history: 1 if left. */
int fts__attach_leave_locked(struct fts__attached *a, struct fts__attach *s, const char *why);
/* In use: do its samples reach newest, or is its publisher alive (counter: the counter
 * now)? 1; else 0 with why. */
int fts__attach_covers(struct fts__attached *a, uint64_t newest, uint64_t (*counter)(void),
		       char *why, size_t len);
/* In use: the clocks' resolution its publisher found (*ns, *ticks; fts__shared_resolution):
 * 1, or 0 when it said none to take. */
int fts__attach_resolution(const struct fts__attached *a, int64_t *ns, uint64_t *ticks);
/* In use: the proof across CPUs in proof (if the publisher proved it) and its period. */
void fts__attach_state(const struct fts__attached *a, char *proof, size_t len,
		       int64_t *period_ns);
/* fts__clock_sharing's answer; own: the process has its own history. */
void fts__attach_sharing(const struct fts__attached *a, const struct fts__attach *s, int own,
			 char *source, size_t slen, char *path, size_t plen,
			 char *note, size_t nlen);

/* ---- faststamp serve ---------------------------------------------------------------- */
/* Open the publisher's memory at path for histories of len bytes each (fts__calib_dims),
 * sampled every interval_ns: *region, or -1 with the reason in err. */
int fts__attach_serve_open(struct fts__attach *s, const char *path, const struct fts__head *id,
			   int64_t interval_ns, uint32_t dircap, size_t len, void **region, char *err,
			   size_t errlen);
/* The histories are made: the proof (cpus, NULL: none needed; skew_ns), the clocks'
 * resolution found (res_ns, res_ticks), a first beat at counter, and the path shown. 0,
 * or -1 with the reason in err. */
int fts__attach_serve_show(struct fts__attach *s, const cpu_set_t *cpus, int64_t skew_ns,
			   int64_t res_ns, uint64_t res_ticks, uint64_t counter, char *err,
			   size_t errlen);
/* Stop publishing, if it does (the memory says it stopped, and why; the socket goes). */
void fts__attach_serve_stop(struct fts__attach *s, const char *why);
/* A publisher's round: it beats, or says it stopped on a counter fault (why). */
void fts__attach_serve_round(struct fts__attach *s, int faulted, const char *why,
			     uint64_t counter);
/* 1 while this process publishes. */
int fts__attach_serving(const struct fts__attach *s);
/* fts__clock_serve_news's answer. */
int fts__attach_serve_news(struct fts__attach *s, unsigned *seq, char *buf, size_t len,
			   int *failed);

#endif /* FTS__ATTACH_H */
