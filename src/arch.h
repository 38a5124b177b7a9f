/* arch.h - the per-architecture part (src/arch_<arch>.c): what the counter is and
 * whether it is trusted. Not installed. */
#ifndef FTS__ARCH_H
#define FTS__ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "clk.h"

struct fts__arch {
	const char *backend;    /* name of the counter backend, "generic" without one */
	int usable;             /* counter trusted for new stamps */
	enum fts__relation relation;
	char reason[192];
	uint64_t hint_hz;       /* frequency hint from the hardware, 0 if none */
	char hint_source[64];
	char cpu_flags[128];
};
/* Probe the CPU and kernel; clocksource is the kernel's current one ("" if unknown). */
void fts__arch_probe(struct fts__arch *a, const char *clocksource);
#if defined(__x86_64__)
/* The decision on x86_64 (a pure function, tested row by row): the TSC is used when it
 * is invariant and the kernel's clocksource is tsc or computed from the TSC; sets
 * usable, relation and reason. */
void fts__tsc_decide(struct fts__arch *a, int invariant, const char *clocksource);
#endif
/* More CPU flags for fts_get_info, appended to buf (slower to find than the probe's). */
void fts__arch_info_flags(char *buf, size_t len);
/* Ordered counter read for sampling; 0 on the generic backend. */
uint64_t fts__arch_counter(void);

#endif /* FTS__ARCH_H */
