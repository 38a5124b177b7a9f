/* arch_generic.c - no counter: every stamp is a clock_gettime(CLOCK_REALTIME) reading. */
#include <stdio.h>

#include "internal.h"
#include "arch.h"

void fts__arch_info_flags(char *buf, size_t len)
{
	(void)buf;
	(void)len;
}

void fts__arch_probe(struct fts__arch *a, const char *clocksource)
{
	(void)clocksource;
	*a = (struct fts__arch){ .backend = "generic", .usable = 0 };
	snprintf(a->reason, sizeof(a->reason), "%s",
		 FTS_FORCE_GENERIC ? "built with FASTSTAMP_FORCE_GENERIC=ON"
				   : "no counter backend for this architecture");
}

uint64_t fts__arch_counter(void)
{
	return 0;
}
