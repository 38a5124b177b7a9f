/* faststamp/riscv64.h - time CSR read (rdtime). Internal: include <faststamp.h>. */
#ifndef FASTSTAMP_RISCV64_H
#define FASTSTAMP_RISCV64_H

#include <stdint.h>

#define FTS__HAVE_COUNTER 1
#define FTS__COUNTER_NAME "rdtime"

static inline uint64_t fts__counter_read_relaxed(void)
{
	uint64_t v;
	__asm__ __volatile__("rdtime %0" : "=r"(v));
	return v;
}

static inline uint64_t fts__counter_read(void)
{
	uint64_t v;
	/* CSR reads are not ordered with memory accesses (Zicsr, "CSR access ordering"):
	 * without a fence, rdtime may execute before an earlier load that saw another
	 * thread's stamp and return an older time. For fence, a CSR read counts as
	 * device input (i), so "fence rw, i" orders every earlier load and store before
	 * it. A hart sees its own CSR reads in program order, so consecutive reads never
	 * need it. */
	__asm__ __volatile__("fence rw, i\n\trdtime %0" : "=r"(v) : : "memory");
	return v;
}

#endif /* FASTSTAMP_RISCV64_H */
