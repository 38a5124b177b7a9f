/* clock_int.h - between the files that make up the process clock (clock.c: samples,
 * the sampler thread, the source; attach.c: the machine's shared history and faststamp
 * serve): what clock.c owns that attach.c uses, and the other way round. Nothing else
 * includes it. Not installed.
 *
 * The map: clock.c samples the clock (a bracket of each clock, health.c's judgement,
 * a history of each clock) and runs the sampler thread; hwsource.c is the hardware's
 * source; health.c judges a sample; record.c writes the record file; attach.c looks for,
 * uses, leaves and publishes the machine's shared history; convert.c (rules 11-12) and
 * tagged.c (rule 14) convert with what they give. */
#ifndef FTS__CLOCK_INT_H
#define FTS__CLOCK_INT_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "clock.h"
#include "histfile.h"

/* ---- clock.c ------------------------------------------------------------------------- */
/* The process clock's lock: every state change of the files above is made under it. */
extern pthread_mutex_t fts__pc_lock;
/* The process's own history of each clock (enum fts__clk); set once, read with acquire. */
extern struct fts_calib *fts__pc_hists[FTS__NCLK];
/* The source's counter now. */
uint64_t fts__pc_counter(void);
/* Is the hardware's counter in use for new stamps (the shared history is of it)? */
int fts__pc_counter_in_use(void);
/* What the process clock's history is of (with_hz: the frequency too, maybe measured). */
void fts__pc_clock_id(struct fts__head *h, int with_hz);
/* Does the counter need the proof across CPUs? */
int fts__pc_needs_proof(void);
/* With the lock held: three samples and the sampler thread (clock.c). 0 or -errno. */
int fts__pc_start_locked(void);
/* With the lock held: the counter across CPUs as proven, for a publisher: 0 with *cpus
 * the CPUs proven (NULL: no proof needed), or -1 with why (a warp, or no test). */
int fts__pc_proof(const cpu_set_t **cpus, char *why, size_t len);
/* The offsets between CPUs this process found (fts__clock_skew_ns is the history's). */
int64_t fts__pc_own_skew_ns(void);
/* The sampling period from now on. */
void fts__pc_set_period(int64_t ns);

/* ---- attach.c ------------------------------------------------------------------------ */
/* With the lock held, before a history is made (own: the process has its own already):
 * the first call looks for the shared history. 1 while the process uses it. */
int fts__attach_locked(int own);
/* Never look for it (a recorder, a publisher). */
void fts__attach_never(void);
/* 1 while the process converts with the shared history. */
int fts__attach_in_use(void);
/* In use: do its samples reach newest, or is its publisher alive? 1; else 0, and the
 * process has left it. */
int fts__attach_covers(uint64_t newest);
/* In use: the publisher's offsets between CPUs. */
int64_t fts__attach_skew_ns(void);
/* In use: the proof across CPUs in proof (if the publisher proved it) and its period. */
void fts__attach_state(char *proof, size_t len, int64_t *period_ns);
/* A publisher's round: it beats, or says it stopped on a counter fault (why). */
void fts__serve_round(int faulted, const char *why, uint64_t counter);
/* 1 while this process publishes. */
int fts__serving(void);

#endif /* FTS__CLOCK_INT_H */
