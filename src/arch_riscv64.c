/* arch_riscv64.c - is the time CSR fit to stamp with, and what frequency does the
 * device tree claim.
 *
 * The choice, by the kernel's current clocksource:
 *  - riscv_clocksource: the kernel keeps time with the time CSR. Used.
 *  - tsc: no RISC-V kernel has it, so /sys is an x86 host's and this process runs under
 *    user-mode emulation (qemu-user), where rdtime returns the host's TSC. The host
 *    kernel trusting its TSC is then the right verdict on this counter. Used, saying so.
 *  - another x86 name: emulation on a host whose kernel does not trust its TSC. Not used.
 *  - unreadable (no /sys): RISC-V Linux keeps time with the time CSR (through SBI
 *    firmware that emulates it where the hardware lacks it). Used, saying so.
 *  - anything else: the kernel prefers another clock. Not used.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "arch.h"
#include "sysfs.h"

/* The timebase the device tree gives for every hart; absent without a device tree
 * (ACPI systems, user-mode emulation). */
#define TIMEBASE_PATH "/proc/device-tree/cpus/timebase-frequency"

void fts__arch_info_flags(char *buf, size_t len)
{
	(void)buf;
	(void)len;
}

void fts__arch_probe(struct fts__arch *a, const char *clocksource)
{
	char buf[16];
	long n;
	uint64_t hz;

	*a = (struct fts__arch){ .backend = "rdtime" };

	/* Only a hint: freq.c uses it when a measurement agrees (under emulation rdtime
	 * runs at the host's TSC rate, whatever a device tree says). */
	n = fts__sysfs_read_text(TIMEBASE_PATH, buf, sizeof(buf));
	if (n > 0 && fts__sysfs_parse_dt_cells(buf, (size_t)n, &hz) == 0 && hz) {
		a->hint_hz = hz;
		snprintf(a->hint_source, sizeof(a->hint_source),
			 "device tree timebase-frequency: %llu Hz", (unsigned long long)hz);
	}

	if (!clocksource || !*clocksource) {
		a->usable = 1;
		snprintf(a->reason, sizeof(a->reason),
			 "kernel clocksource unreadable; RISC-V Linux keeps time with the time "
			 "CSR, so it is used");
	} else if (!strcmp(clocksource, "riscv_clocksource")) {
		a->usable = 1;
		snprintf(a->reason, sizeof(a->reason),
			 "the kernel's clocksource is riscv_clocksource, this counter");
	} else if (!strcmp(clocksource, "tsc")) {
		a->usable = 1;
		snprintf(a->cpu_flags, sizeof(a->cpu_flags), "user-mode-emulation");
		snprintf(a->reason, sizeof(a->reason),
			 "kernel clocksource tsc is an x86 host's: user-mode emulation, where "
			 "rdtime reads the host's TSC, which the host kernel trusts");
	} else if (fts__sysfs_clocksource_is_x86(clocksource)) {
		snprintf(a->cpu_flags, sizeof(a->cpu_flags), "user-mode-emulation");
		snprintf(a->reason, sizeof(a->reason),
			 "kernel clocksource %s is an x86 host's: user-mode emulation, where "
			 "rdtime reads the host's TSC, which the host kernel does not trust",
			 clocksource);
	} else {
		snprintf(a->reason, sizeof(a->reason),
			 "kernel clocksource is %s, not riscv_clocksource: the kernel does not "
			 "keep time with this counter",
			 clocksource);
	}
}

uint64_t fts__arch_counter(void)
{
	return fts__counter_read();
}
