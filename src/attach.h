/* attach.h - attach.c's interface: the machine's shared history (shared.h) in the
 * process clock, and publishing it (faststamp serve). attach.c calls nothing of the
 * process clock: what it needs of it comes as arguments (struct fts__attach_clock).
 * Its caller, clock.c, holds the process clock's lock across every call named _locked
 * and every serve call; the inline reads below take no lock. Not installed. */
#ifndef FTS__ATTACH_H
#define FTS__ATTACH_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "histfile.h"
#include "shared.h"

/* What looking for the shared history asks of the process clock (only when it looks). */
struct fts__attach_clock {
	int (*counter_in_use)(void);   /* is the hardware's counter in use for new stamps? */
	void (*clock_id)(struct fts__head *h, int with_hz);   /* what its history is of */
	int (*needs_proof)(void);      /* does the counter need the proof across CPUs? */
	uint64_t (*counter)(void);     /* its counter now */
};

/* The state conversions read. Written under the caller's lock; attached is stored with
 * release after shared and frozen are set, and read with acquire. */
struct fts__attached {
	struct fts__shared shared;             /* the machine's history, while in use */
	int attached;                          /* shared.views are in use */
	struct fts_calib *frozen[FTS__NCLK];   /* copies of them, taken on leaving */
};
extern struct fts__attached fts__attach;

/* 1 while the process converts with the shared history. */
static inline int fts__attach_in_use(void)
{
	return __atomic_load_n(&fts__attach.attached, __ATOMIC_ACQUIRE);
}
/* The shared history of clock k (NULL: the memory holds none), valid while in use and
 * after (the mapping stays). */
static inline const struct fts_calib *fts__attach_view(int k)
{
	return fts__attach.shared.views[k];
}
/* The copy of it taken on leaving it, or NULL. */
static inline const struct fts_calib *fts__attach_frozen(int k)
{
	return __atomic_load_n(&fts__attach.frozen[k], __ATOMIC_ACQUIRE);
}
/* In use: the publisher's offsets between CPUs. */
static inline int64_t fts__attach_skew_ns(void)
{
	return fts__attach.shared.head->skew_ns;
}

/* Before a history is made (own: the process has its own already): the first call
 * looks for the shared history. 1 while the process uses it. */
int fts__attach_locked(int own, const struct fts__attach_clock *c);
/* Never look for it (a recorder, a publisher). */
void fts__attach_never(void);
/* Stop using it (why: for fts_get_info), keeping a copy of each history: 1 if left. */
int fts__attach_leave_locked(const char *why);
/* In use: do its samples reach newest, or is its publisher alive (counter: the counter
 * now)? 1; else 0 with why. */
int fts__attach_covers(uint64_t newest, uint64_t (*counter)(void), char *why, size_t len);
/* In use: the proof across CPUs in proof (if the publisher proved it) and its period. */
void fts__attach_state(char *proof, size_t len, int64_t *period_ns);
/* fts__clock_sharing's answer; own: the process has its own history. */
void fts__attach_sharing(int own, char *source, size_t slen, char *path, size_t plen,
			 char *note, size_t nlen);

/* ---- faststamp serve ---------------------------------------------------------------- */
/* Open the publisher's memory at path for histories of len bytes each (fts__calib_dims),
 * sampled every interval_ns: *region, or -1 with the reason in err. */
int fts__attach_serve_open(const char *path, const struct fts__head *id, int64_t interval_ns,
			   uint32_t dircap, size_t len, void **region, char *err, size_t errlen);
/* The histories are made: the proof (cpus, NULL: none needed; skew_ns), a first beat at
 * counter, and the path shown. 0, or -1 with the reason in err. */
int fts__attach_serve_show(const cpu_set_t *cpus, int64_t skew_ns, uint64_t counter, char *err,
			   size_t errlen);
/* Stop publishing, if it does (the memory says it stopped, and why; the socket goes). */
void fts__attach_serve_stop(const char *why);
/* A publisher's round: it beats, or says it stopped on a counter fault (why). */
void fts__attach_serve_round(int faulted, const char *why, uint64_t counter);
/* 1 while this process publishes. */
int fts__attach_serving(void);
/* fts__clock_serve_news's answer. */
int fts__attach_serve_news(unsigned *seq, char *buf, size_t len, int *failed);

#endif /* FTS__ATTACH_H */
