/* faststamp/aarch64.h - generic timer read (CNTVCT_EL0). Internal: include <faststamp.h>. */
#ifndef FASTSTAMP_AARCH64_H
#define FASTSTAMP_AARCH64_H

#include <stdint.h>

#define FTS__HAVE_COUNTER 1
#define FTS__COUNTER_NAME "cntvct_el0"

static inline uint64_t fts__counter_read_relaxed(void)
{
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
}

static inline uint64_t fts__counter_read(void)
{
	uint64_t v;
	/* The Arm ARM allows reads of the counter to happen speculatively and out of
	 * order with earlier instructions, so a stamp taken after loading another
	 * thread's stamp could read an older count. It names isb as the way to make the
	 * read happen after an earlier load (the same isb; mrs pair Linux's vDSO uses).
	 * "memory" keeps the compiler from moving loads and stores across it. */
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}

#endif /* FASTSTAMP_AARCH64_H */
