/* proof.h - proof.c's interface: the process clock's proof of its counter across CPUs.
 * Each function runs with the process clock's lock held. Not installed. */
#ifndef FTS__PROOF_H
#define FTS__PROOF_H

#include "clk.h"
#include "health.h"

/* How the kernel's clock relates to the source's counter (clk.h). */
enum fts__relation fts__proof_relation(void);
/* Does the counter of this source need the proof across CPUs? */
int fts__proof_needed(void);
/* New stamps use the counter when it was chosen, is proven (or need not be) and no
 * fault was found: fts__store_counter set so. */
void fts__proof_store_choice(void);
/* The proof as the source starts, needed or not (pending, or not needed); no offsets. */
void fts__proof_reset(void);
/* fts__proof_reset() if the proof was never looked at. */
void fts__proof_reset_once(void);
/* Run the warp test if the counter needs it and has none yet (or the last one could
 * not run and its retry is due). 0, or a negative errno (-EAGAIN: not due yet). */
int fts__proof_run_locked(void);
/* Once the counter's rate is known: the offsets the warp test could not rule out
 * join the bound's share for offsets between CPUs. */
void fts__proof_skew_update_locked(void);
/* A healthy sample taken on another CPU than the one before (e: what it found). */
void fts__proof_skew_visit_locked(const struct fts__seen *e);

#endif /* FTS__PROOF_H */
