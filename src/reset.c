/* reset.c - the process clock's one reset, and fork.
 *
 * Whatever the reason (a fork's child, a new source for the tests' seam), the process
 * clock forgets by one function, fts__reset_locked: its cold part in one assignment,
 * and what of the hot part a new source starts without. Fork is kept from landing
 * inside a history write by the lock, taken around it (pthread_atfork). */
#include <pthread.h>

#include "calib.h"
#include "clockobj.h"
#include "proof.h"
#include "record.h"
#include "reset.h"

/* The one reset of the process clock, with lock held (or in a fork's child). The
 * cold part is one assignment; of the hot part, a new source starts with no sampler,
 * no samples (its histories emptied in place: readers may hold them), no rate, no
 * fault, no offsets between CPUs (fts__proof_reset) and a new generation; the source and
 * the used flag are the caller's. The attach.c part looks again for the shared
 * history. */
void fts__reset_locked(enum fts__reset what)
{
	__atomic_store_n(&pc->hot.running, 0, __ATOMIC_RELAXED);
	if (what == FTS__RESET_THREADS) {
		pc->of.retry_at = pc->of.retry_gap = 0;
		pc->alive = 0;   /* threads do not survive fork */
		return;
	}
	pc->of = (struct clock_cold){ .proof.cpu = -1 };
	fts__attach_reset(&pc->hot.attach, &pc->attach);
	view_changed();
	pc->source_gen++;   /* a sampler thread of the old source stops when it wakes */
	for (int k = 0; k < FTS__NCLK; k++)
		if (pc_hist(k))
			fts__calib_reset(pc_hist(k));
	__atomic_store_n(&pc->hot.period_ticks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pc->hot.res_ticks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pc->hot.taken, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pc->hot.faulted, 0, __ATOMIC_RELAXED);   /* a new source starts healthy, */
	fts__proof_reset();   /* and unproven */
	fts__proof_store_choice();
}

/* Fork must not land inside a history write: the child would inherit a writer half way
 * through an add, and the lock held by a thread it does not have. The writer holds the
 * lock across every write; fork takes it first. */
static void before_fork(void)
{
	pthread_mutex_lock(&pc->lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&pc->lock);
}

static void after_fork_child(void)
{
	pthread_mutex_init(&pc->lock, NULL);
	fts__reset_locked(FTS__RESET_THREADS);
	fts__record_drop_inherited();
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

void fts__reset_watch_fork(void)
{
	pthread_once(&atfork_once, register_atfork);
}
