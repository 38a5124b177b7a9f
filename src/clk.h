/* clk.h - small types that the process clock and the files below it share: the clocks
 * stamps convert to, how the kernel's clocksource stands to the counter, a sample's
 * health reads. No functions (hwsource.h names the clocks' ids). Not installed. */
#ifndef FTS__CLK_H
#define FTS__CLK_H

#include <stdint.h>

/* How the kernel's clocksource stands to the counter. */
enum fts__relation {
	FTS__CS_IS_COUNTER,     /* it is the counter (tsc, arch_sys_counter): the kernel
				 * vouches for it on every CPU */
	FTS__CS_FROM_COUNTER,   /* computed from it by a scale (kvm-clock, Hyper-V's TSC
				 * page, xen): faststamp proves it across CPUs, and
				 * CLOCK_MONOTONIC_RAW follows it closely on every CPU */
	FTS__CS_OTHER,          /* another clock (hpet, acpi_pm): only a forced counter is
				 * used there, proven across CPUs */
};
/* The clocks a stamp converts to (fts_convert_clock): each has its own history in the
 * process clock, fed by the same samples. */
enum fts__clk {
	FTS__CLK_REALTIME, FTS__CLK_TAI, FTS__CLK_MONOTONIC, FTS__CLK_BOOTTIME, FTS__CLK_RAW,
	FTS__NCLK
};
/* The health reads of a sample, in this order. */
struct fts__clocks {
	int64_t rt, mono, boot, raw;   /* REALTIME, MONOTONIC, BOOTTIME, MONOTONIC_RAW ns */
	int64_t tai;                   /* CLOCK_TAI ns */
};

#endif /* FTS__CLK_H */
