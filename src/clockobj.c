/* clockobj.c - the process clock's one object (clockobj.h), as the process starts. It
 * is defined here, below every file that works on it (clock.c, sampler.c, reset.c,
 * proof.c), so that none of them depends on another for it. */
#include "clockobj.h"
#include "internal.h"

/* The one object, the hot part of which is the only state of the library's hot data
 * section besides rule 12's lines (fresh.c). */
struct fts__clock fts__clock_pc FTS__HOT_DATA = {
	.hot.src = { .counter = fts__hw_counter, .realtime = fts__hw_realtime,
		     .clocks = fts__hw_clocks, .read = fts__hw_clock, .epoch = fts__hw_epoch },
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.period_ns = SAMPLER_PERIOD_NS,
};
