/* arch_x86_64.c - is the TSC fit to stamp with, and what frequency does the CPU claim. */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "arch.h"
#include "clock.h"
#include "sysfs.h"

#define LEAF_POWER 0x80000007u     /* EDX bit 8: invariant TSC */
#define LEAF_EXT 0x80000001u       /* EDX bit 27: rdtscp */
#define LEAF_HV_BASE 0x40000000u   /* hypervisor vendor and highest hypervisor leaf */
#define LEAF_HV_TIMING 0x40000010u /* EAX: TSC kHz (VMware, KVM with the timing leaf) */

static void flag(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);
	snprintf(buf + used, len - used, "%s%s", used ? " " : "", name);
}

/* Linux's own verdicts on the TSC, from /proc/cpuinfo: for fts_get_info only, so that
 * loading the library reads no more than the decision needs. */
void fts__arch_info_flags(char *buf, size_t len)
{
	static const char *const linux_flags[] = { "constant_tsc", "nonstop_tsc", "tsc_known_freq",
						   "tsc_reliable" };
	char cpuinfo[16384];

	if (fts__sysfs_read_text("/proc/cpuinfo", cpuinfo, sizeof(cpuinfo)) <= 0)
		return;
	for (size_t i = 0; i < sizeof(linux_flags) / sizeof(linux_flags[0]); i++)
		if (fts__sysfs_cpuinfo_has_flag(cpuinfo, linux_flags[i]))
			flag(buf, len, linux_flags[i]);
}

void fts__arch_probe(struct fts__arch *a, const char *clocksource)
{
	unsigned eax, ebx, ecx, edx, max_basic, max_ext;
	int invariant = 0, hv = 0;

	*a = (struct fts__arch){ .backend = "tsc" };
	max_basic = __get_cpuid_max(0, NULL);
	max_ext = __get_cpuid_max(0x80000000u, NULL);
	if (max_ext >= LEAF_POWER && __get_cpuid(LEAF_POWER, &eax, &ebx, &ecx, &edx))
		invariant = (edx >> 8) & 1;
	if (invariant)
		flag(a->cpu_flags, sizeof(a->cpu_flags), "invariant_tsc");
	if (max_ext >= LEAF_EXT && __get_cpuid(LEAF_EXT, &eax, &ebx, &ecx, &edx) && (edx >> 27) & 1)
		flag(a->cpu_flags, sizeof(a->cpu_flags), "rdtscp");
	if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx >> 31) & 1) {
		hv = 1;
		flag(a->cpu_flags, sizeof(a->cpu_flags), "hypervisor");
	}
	/* Frequency hints, most precise first. */
	if (hv && __get_cpuid(LEAF_HV_BASE, &eax, &ebx, &ecx, &edx) && eax >= LEAF_HV_TIMING) {
		__cpuid(LEAF_HV_TIMING, eax, ebx, ecx, edx);
		if (eax) {
			a->hint_hz = (uint64_t)eax * 1000;
			snprintf(a->hint_source, sizeof(a->hint_source),
				 "CPUID 0x40000010 (hypervisor): %u kHz", eax);
		}
	}
	if (!a->hint_hz && max_basic >= 0x15) {
		__cpuid_count(0x15, 0, eax, ebx, ecx, edx);
		if (eax && ebx && ecx) {   /* crystal Hz * ratio */
			a->hint_hz = (uint64_t)ecx * ebx / eax;
			snprintf(a->hint_source, sizeof(a->hint_source),
				 "CPUID 0x15: %u Hz crystal * %u/%u", ecx, ebx, eax);
		}
	}
	if (!a->hint_hz && max_basic >= 0x16) {
		__cpuid_count(0x16, 0, eax, ebx, ecx, edx);
		if (eax & 0xffff) {
			a->hint_hz = (uint64_t)(eax & 0xffff) * 1000000;
			snprintf(a->hint_source, sizeof(a->hint_source),
				 "CPUID 0x16: base %u MHz", eax & 0xffff);
		}
	}

	fts__tsc_decide(a, invariant, clocksource);
}

/* Clocksources a Linux kernel computes from the TSC, with a scale that the hypervisor
 * publishes (arch/x86/kernel/pvclock.c for kvm-clock and xen: the vCPU's TSC times
 * tsc_to_system_mul; drivers/clocksource/hyperv_timer.c for the TSC page: the TSC times
 * tsc_scale), and tsc-early, the TSC itself before the kernel has calibrated it.
 * hyperv_clocksource_msr reads a counter of the hypervisor's, not the TSC. */
static const char *const from_tsc[] = { "kvm-clock", "hyperv_clocksource_tsc_page", "xen",
					"tsc-early" };

void fts__tsc_decide(struct fts__arch *a, int invariant, const char *clocksource)
{
	a->usable = 0;
	a->relation = FTS__CS_OTHER;
	if (clocksource && !strcmp(clocksource, "tsc"))
		a->relation = FTS__CS_IS_COUNTER;
	for (size_t i = 0; clocksource && i < sizeof(from_tsc) / sizeof(from_tsc[0]); i++)
		if (!strcmp(clocksource, from_tsc[i]))
			a->relation = FTS__CS_FROM_COUNTER;
	if (!invariant)
		snprintf(a->reason, sizeof(a->reason),
			 "TSC not invariant (CPUID 0x80000007): it may stop or change rate");
	else if (!clocksource || !*clocksource)
		snprintf(a->reason, sizeof(a->reason),
			 "kernel clocksource unknown: cannot tell whether the kernel keeps time "
			 "with the TSC");
	else if (a->relation == FTS__CS_IS_COUNTER)
		snprintf(a->reason, sizeof(a->reason),
			 "invariant TSC, and the kernel's clocksource is tsc");
	else if (a->relation == FTS__CS_FROM_COUNTER)
		snprintf(a->reason, sizeof(a->reason),
			 "invariant TSC, and the kernel's clocksource %s is computed from it: "
			 "proven across CPUs by faststamp", clocksource);
	else
		snprintf(a->reason, sizeof(a->reason),
			 "kernel clocksource is %s, neither the TSC nor computed from it "
			 "(FASTSTAMP_BACKEND=tsc forces the TSC, proven across CPUs)", clocksource);
	a->usable = invariant && clocksource && a->relation != FTS__CS_OTHER;
}

uint64_t fts__arch_counter(void)
{
	return fts__counter_read();
}
