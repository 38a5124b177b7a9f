/* internal.h - what every file of the library shares: the atomic access and hot-section
 * macros, and the one way a function fails. Each module's interface is its own header
 * (calib.h, clock.h, attach.h, fresh.h, hwsource.h, tagged.h, history.h, histfile.h,
 * shared.h, now.h, arch.h, freq.h, sysfs.h, backend.h, estimate.h, health.h, warp.h),
 * and the small types several share are clk.h's. Not installed. */
#ifndef FTS__INTERNAL_H
#define FTS__INTERNAL_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "faststamp.h"
#include "invariant.h"
#include "warp.h"

#define FTS__LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
/* A conversion after idle pays a TLB miss for every page it touches and a miss for
 * every line: the code and the state it runs through are kept together, the code first
 * in .text (the linker groups hot sections), the state in a page of its own (hot.ld).
 * FTS__PATH(n): the conversion's paths after idle in the order n gives across files
 * (GNU ld sorts .text.sorted.* by name, after the hot sections; other linkers keep
 * them, unordered, in .text), from a page's start (0, FTS__PATH_START: fts_convert):
 * 1 what it shares with the other entry points and what a stamp on the line kept runs
 * (the epoch's read), 2-4 a fresh stamp's (the fresh line renewed from one clock read,
 * fresh.c), 5 an old stamp's (inside the history), 6 the entry for the other clocks, 7
 * what follows a narrow read. fts_convert's fresh stamps then run in two pages, its
 * old ones too, and those on the line kept in one (scripts/conversion-path counts
 * them). */
#define FTS__HOT __attribute__((hot))
#define FTS__PATH(n) __attribute__((hot, section(".text.sorted.fts_" #n)))
#define FTS__PATH_START __attribute__((aligned(4096)))
#define FTS__HOT_DATA __attribute__((section(".data.fts_hot")))
#define FTS__HOT_DATA_LAST __attribute__((section(".data.fts_hot_last")))
#define FTS__ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* ---- errors ---------------------------------------------------------------------- */
/* The one way a public function fails: errno = err, return -1 (or NULL). */
static inline int fts__fail(int err)
{
	errno = err;
	return -1;
}

static inline void *fts__fail_null(int err)
{
	errno = err;
	return NULL;
}

#endif /* FTS__INTERNAL_H */
