/* faststamp/x86_64.h - TSC read. Internal: include <faststamp.h>. */
#ifndef FASTSTAMP_X86_64_H
#define FASTSTAMP_X86_64_H

#include <stdint.h>

#define FTS__HAVE_COUNTER 1
#define FTS__COUNTER_NAME "rdtsc"

static inline uint64_t fts__counter_read_relaxed(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t fts__counter_read(void)
{
	uint32_t lo, hi;
	/* rdtsc is not serialising: it may execute before earlier loads complete, so a
	 * stamp taken after reading another thread's stamp could be older than it.
	 * lfence waits for all earlier instructions to complete locally (Intel SDM;
	 * AMD with the LFENCE-serialising MSR set, as Linux does). */
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

#endif /* FASTSTAMP_X86_64_H */
