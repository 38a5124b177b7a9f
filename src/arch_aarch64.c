/* arch_aarch64.c - is the generic timer's virtual count fit to stamp with, and what
 * frequency does CNTFRQ_EL0 claim.
 *
 * The choice, by the kernel's current clocksource:
 *  - arch_sys_counter: the kernel keeps time with this very counter. Used.
 *  - an x86 name (tsc, kvm-clock, ...): no arm64 kernel has those, so /sys is an x86
 *    host's and this process runs under user-mode emulation. The counter is then the
 *    emulator's: qemu-user (7.2) computes it from the host's CLOCK_REALTIME at 1 us
 *    resolution, so it steps when the clock is set and is 62 ticks coarser than its
 *    frequency claims; conversion bounds built on it would not hold. Not used
 *    (FASTSTAMP_BACKEND=cntvct forces it, for testing the counter path anyway).
 *  - unreadable (no /sys in a container): arm64 Linux requires the architected timer
 *    and keeps time with it wherever it exists. Used, saying so.
 *  - anything else (arch_mem_counter, an SoC timer): the kernel prefers another clock
 *    to this one, so we do not trust it either. Not used.
 * Kernels with a counter erratum (e.g. Cortex-A73 858921) still name arch_sys_counter
 * but trap and fix EL0 reads; stamps stay correct, only slower.
 */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#include "internal.h"
#include "arch.h"
#include "sysfs.h"

#ifndef HWCAP2_ECV
#  define HWCAP2_ECV (1 << 19)   /* FEAT_ECV: self-synchronised counter views exist */
#endif
#ifndef HWCAP_EVTSTRM
#  define HWCAP_EVTSTRM (1 << 2) /* the kernel runs the timer event stream */
#endif

static void flag(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);
	snprintf(buf + used, len - used, "%s%s", used ? " " : "", name);
}

void fts__arch_info_flags(char *buf, size_t len)
{
	(void)buf;
	(void)len;
}

void fts__arch_probe(struct fts__arch *a, const char *clocksource)
{
	uint64_t frq;

	*a = (struct fts__arch){ .backend = "cntvct" };
	if (getauxval(AT_HWCAP) & HWCAP_EVTSTRM)
		flag(a->cpu_flags, sizeof(a->cpu_flags), "evtstrm");
	if (getauxval(AT_HWCAP2) & HWCAP2_ECV)
		flag(a->cpu_flags, sizeof(a->cpu_flags), "ecv");

	/* Firmware writes CNTFRQ_EL0 and nothing checks it; freq.c uses it only when a
	 * measurement agrees. The register is 32 bits wide in practice (upper half RES0). */
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
	frq &= 0xffffffffu;
	if (frq) {
		a->hint_hz = frq;
		snprintf(a->hint_source, sizeof(a->hint_source), "CNTFRQ_EL0: %llu Hz",
			 (unsigned long long)frq);
	}

	if (!clocksource || !*clocksource) {
		a->usable = 1;
		snprintf(a->reason, sizeof(a->reason),
			 "kernel clocksource unreadable; arm64 Linux keeps time with the "
			 "architected counter, so it is used");
	} else if (!strcmp(clocksource, "arch_sys_counter")) {
		a->usable = 1;
		snprintf(a->reason, sizeof(a->reason),
			 "the kernel's clocksource is arch_sys_counter, this counter");
	} else if (fts__sysfs_clocksource_is_x86(clocksource)) {
		flag(a->cpu_flags, sizeof(a->cpu_flags), "user-mode-emulation");
		snprintf(a->reason, sizeof(a->reason),
			 "kernel clocksource %s is an x86 host's: user-mode emulation, whose "
			 "counter nothing vouches for (qemu-user's follows the host wall clock "
			 "in 1 us steps)",
			 clocksource);
	} else {
		snprintf(a->reason, sizeof(a->reason),
			 "kernel clocksource is %s, not arch_sys_counter: the kernel does not "
			 "keep time with this counter",
			 clocksource);
	}
}

uint64_t fts__arch_counter(void)
{
	return fts__counter_read();
}
