/* clockobj.c - the process clock's one object (clockobj.h), as the process starts. It
 * is defined here, below every file that works on it (clock.c, sampler.c, reset.c,
 * proof.c), so that none of them depends on another for it. */
#include <stddef.h>

#include "clockobj.h"
#include "internal.h"

/* The one object, the last of the library's hot data section (src/hot.ld): its hot
 * part and the histories' structs in the section's first page, after rule 12's lines
 * and the clock read's function (scripts/hot-data-page checks where it starts). */
_Static_assert(offsetof(struct fts__clock, lock) <= 2048,
	       "the hot part and the histories' structs in the object's first 2 KiB");
struct fts__clock fts__clock_pc FTS__HOT_DATA_LAST = {
	.hot.src = { .counter = fts__hw_counter, .realtime = fts__hw_realtime,
		     .clocks = fts__hw_clocks, .read = fts__hw_clock, .epoch = fts__hw_epoch },
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.period_ns = SAMPLER_PERIOD_NS,
};
