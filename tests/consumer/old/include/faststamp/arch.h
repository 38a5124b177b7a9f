/* faststamp/arch.h - the one place that decides which counter backs a stamp.
 *
 * Each architecture header defines, as static inline functions:
 *   uint64_t fts__counter_read(void)          ordered read (see store_fast_timestamp)
 *   uint64_t fts__counter_read_relaxed(void)  bare read, may run ahead of earlier loads
 * and the macro FTS__COUNTER_NAME (a string naming the instruction).
 * Without a counter (or with FTS_FORCE_GENERIC) FTS__HAVE_COUNTER is 0 and every
 * stamp is a clock_gettime(CLOCK_REALTIME) reading. Internal: include <faststamp.h>.
 */
#ifndef FASTSTAMP_ARCH_H
#define FASTSTAMP_ARCH_H

#include <faststamp/config.h>

#if defined(FTS_FORCE_GENERIC) && FTS_FORCE_GENERIC
#  define FTS__HAVE_COUNTER 0
#elif defined(__x86_64__)
#  include <faststamp/x86_64.h>
#elif defined(__aarch64__)
#  include <faststamp/aarch64.h>
#elif defined(__riscv) && __riscv_xlen == 64
#  include <faststamp/riscv64.h>
#else
#  define FTS__HAVE_COUNTER 0
#endif

#endif /* FASTSTAMP_ARCH_H */
