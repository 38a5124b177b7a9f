/* guest_ftrace.c - the fault lab's check against the kernel's own tracer (scripts/guest/,
 * scenario ftrace): for each trace_clock the guest kernel offers among mono, mono_raw,
 * boot and tai, it sets that clock, then many times stores a stamp, writes a line to
 * trace_marker and stores another stamp. The tracer timestamps each line with its
 * clock inside the write; both stamps are converted with fts_convert_clock to the
 * matching clock, and the kernel's timestamp must lie within
 * [ns_before - err_before, ns_after + err_after].
 *
 * To tell the clocks apart, CLOCK_TAI is first set 37 s ahead of CLOCK_REALTIME
 * (ADJ_TAI) and the guest is suspended once (S3, RTC wake-up) so that CLOCK_BOOTTIME
 * runs ahead of CLOCK_MONOTONIC: converting to the wrong one of these misses by
 * seconds. MONOTONIC_RAW stays within microseconds of MONOTONIC in the guest, so the
 * mono_raw check only tests that clock's own history.
 *
 * Timestamps are read in nanoseconds with the trace's raw option ("PID CPU NS ..."); a
 * kernel without it prints seconds.microseconds, truncated, and the check then allows
 * the 999 ns the printing dropped (said in the result: resolution_ns=1000).
 * The check resolves no finer than its margins: how far the kernel's timestamp lies
 * inside the interval, below (from before - err) and above (to after + err). They hold
 * the write system call's own time, some microseconds under TCG, and are reported
 * (smallest and median): a conversion off by less than the smallest passes.
 *
 * usage: FASTSTAMP_BACKEND=tsc guest_ftrace
 * Only inside the lab's guest (fts.scenario= on the kernel command line): it suspends
 * the machine and sets its TAI offset. Prints "FTS-RESULT scenario=ftrace ..." for
 * scripts/guest/run-scenario; "skip=REASON" (one word) when the kernel has no tracefs
 * or offers none of the clocks. Exit 0 when it ran (whatever its verdict), 2 when it
 * could not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include <faststamp.h>

#include "guest.h"

#define MARKERS 2000          /* per clock */
#define SPACING_NS 200000     /* between markers: 0.4 s a clock */
#define TAI_OFFSET 37         /* TAI - UTC since 2017 */
#define SHOW 5                /* misses printed in detail, per clock */
#define TAG "fts-marker k="

static const struct {
	const char *trace;    /* its name in trace_clock */
	clockid_t id;
	const char *name;     /* the CLOCK_ name, for the report */
} clocks[] = {
	{ "mono", CLOCK_MONOTONIC, "MONOTONIC" },
	{ "mono_raw", CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW" },
	{ "boot", CLOCK_BOOTTIME, "BOOTTIME" },
	{ "tai", CLOCK_TAI, "TAI" },
};
#define NCLOCKS (sizeof(clocks) / sizeof(clocks[0]))

struct mark {
	fast_timestamp_t a, b;   /* before and after the write */
	int64_t kts;             /* the tracer's timestamp, ns; -1 until found */
};

static struct mark marks[MARKERS];
static int64_t below[MARKERS], above[MARKERS];   /* each marker's margins, ns */
static char dir[64];         /* the tracefs directory */

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int write_trace(const char *file, const char *text)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return write_kernel_file(path, text, O_TRUNC);
}

static int read_trace(const char *file, char *buf, size_t len)
{
	char path[128];
	FILE *f;
	size_t got;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (!(f = fopen(path, "r")))
		return -errno;
	got = fread(buf, 1, len - 1, f);
	buf[got] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* tracefs where the kernel mounts it, or mounted there, or under debugfs. */
static int find_tracefs(void)
{
	static const char *const where[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128];

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/trace_clock", where[i]);
		if (access(path, F_OK) == 0) {
			snprintf(dir, sizeof(dir), "%s", where[i]);
			return 0;
		}
		if (i == 0)
			mount("nodev", where[0], "tracefs", 0, NULL);
		else
			mount("nodev", "/sys/kernel/debug", "debugfs", 0, NULL);
		if (access(path, F_OK) == 0) {
			snprintf(dir, sizeof(dir), "%s", where[i]);
			return 0;
		}
	}
	return -1;
}

/* Is word one of trace_clock's entries ("[local] global ... mono ...")? */
static int offered(const char *list, const char *word)
{
	char copy[512], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", list);
	for (char *t = strtok_r(copy, " []", &save); t; t = strtok_r(NULL, " []", &save))
		if (!strcmp(t, word))
			return 1;
	return 0;
}

/* One line of the trace: the marker's index and its timestamp in ns, or -1. Raw:
 * "PID CPU NS # IP fts-marker k=N"; otherwise
 * "TASK-PID [CPU] FLAGS SECS.USECS: tracing_mark_write: fts-marker k=N". */
static int parse_line(const char *line, int raw, int64_t *ts)
{
	const char *m = strstr(line, TAG), *p;
	int k, pid, cpu;
	unsigned long long v, sec, usec;

	if (!m || line[0] == '#' || sscanf(m + strlen(TAG), "%d", &k) != 1 || k < 0 ||
	    k >= MARKERS)
		return -1;
	if (raw) {
		if (sscanf(line, "%d %d %llu", &pid, &cpu, &v) != 3)
			return -1;
		*ts = (int64_t)v;
		return k;
	}
	if (!(p = strstr(line, ": tracing_mark_write:")))
		return -1;
	while (p > line && p[-1] != ' ')
		p--;
	if (sscanf(p, "%llu.%6llu", &sec, &usec) != 2)
		return -1;
	*ts = (int64_t)(sec * SEC + usec * 1000);
	return k;
}

/* Markers on one trace clock; their verdict as key=value fields appended to out. */
static void run_clock(size_t c, int raw, int64_t res, char *out, size_t outlen)
{
	const char *tc = clocks[c].trace;
	char cur[512], line[1024], path[128], text[64];
	int fd, rc;
	uint64_t found = 0, outside = 0, errors = 0, shown = 0, judged = 0;
	int64_t worst = 0, max_err = 0, max_width = 0, next;
	FILE *f;

	/* 4 MiB a CPU holds every marker: the ring buffer starts at its boot size, and an
	 * overwriting buffer keeps only the newest. */
	if ((rc = write_trace("tracing_on", "0")) < 0 ||
	    (rc = write_trace("buffer_size_kb", "4096")) < 0 ||
	    (rc = write_trace("trace_clock", tc)) < 0 ||
	    (rc = write_trace("trace", "")) < 0 || (rc = write_trace("tracing_on", "1")) < 0 ||
	    (rc = read_trace("trace_clock", cur, sizeof(cur))) < 0) {
		printf("ftrace %s: setting up the trace failed: %s\n", tc, strerror(-rc));
		snprintf(out + strlen(out), outlen - strlen(out), " %s_error=setup", tc);
		return;
	}
	snprintf(text, sizeof(text), "[%s]", tc);
	if (!strstr(cur, text)) {
		printf("ftrace %s: trace_clock reads \"%s\" after setting it\n", tc, cur);
		snprintf(out + strlen(out), outlen - strlen(out), " %s_error=not-set", tc);
		return;
	}
	snprintf(path, sizeof(path), "%s/trace_marker", dir);
	if ((fd = open(path, O_WRONLY)) < 0) {
		printf("ftrace %s: %s: %s\n", tc, path, strerror(errno));
		snprintf(out + strlen(out), outlen - strlen(out), " %s_error=trace_marker", tc);
		return;
	}
	next = now(CLOCK_MONOTONIC);
	for (int k = 0; k < MARKERS; k++) {
		int len = snprintf(text, sizeof(text), TAG "%d\n", k);

		sleep_until(next);
		next += SPACING_NS;
		marks[k].kts = -1;
		store_fast_timestamp(&marks[k].a);
		rc = (int)write(fd, text, (size_t)len);
		store_fast_timestamp(&marks[k].b);
		if (rc != len)
			marks[k].a = marks[k].b = 0;   /* not written: not looked for */
	}
	close(fd);
	write_trace("tracing_on", "0");

	snprintf(path, sizeof(path), "%s/trace", dir);
	if (!(f = fopen(path, "r"))) {
		printf("ftrace %s: %s: %s\n", tc, path, strerror(errno));
		snprintf(out + strlen(out), outlen - strlen(out), " %s_error=trace", tc);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		int64_t ts;
		int k = parse_line(line, raw, &ts);

		if (k >= 0 && marks[k].kts < 0) {
			marks[k].kts = ts;
			if (found++ == 0)
				printf("ftrace %s: first marker's line: %s", tc, line);
		}
	}
	fclose(f);

	for (int k = 0; k < MARKERS; k++) {
		struct mark *m = &marks[k];
		int64_t na, nb, ea, eb, lo, hi, miss;

		if (m->kts < 0)
			continue;
		if (fts_convert_clock(&m->a, clocks[c].id, &na, &ea) < 0 ||
		    fts_convert_clock(&m->b, clocks[c].id, &nb, &eb) < 0) {
			if (errors++ == 0)
				printf("ftrace %s: marker %d: conversion failed: %s\n", tc, k,
				       strerror(errno));
			continue;
		}
		lo = na - ea;
		hi = nb + eb;
		max_err = ea > max_err ? ea : max_err;
		max_err = eb > max_err ? eb : max_err;
		max_width = hi - lo > max_width ? hi - lo : max_width;
		/* The kernel's ns lie in [kts, kts + res - 1]: printed microseconds are
		 * truncated. A miss when that interval and [lo, hi] do not meet. */
		miss = m->kts > hi ? m->kts - hi : m->kts + res - 1 < lo ? lo - (m->kts + res - 1) : 0;
		below[judged] = m->kts + res - 1 - lo;
		above[judged++] = hi - m->kts;
		if (!miss)
			continue;
		outside++;
		worst = miss > worst ? miss : worst;
		if (shown++ < SHOW)
			printf("  miss %s #%d: kernel %" PRId64 " ns, stamps [%" PRId64 " - %" PRId64
			       ", %" PRId64 " + %" PRId64 "] ns: kernel - before %+" PRId64
			       " ns, kernel - after %+" PRId64 " ns\n", tc, k, m->kts, na, ea, nb, eb,
			       m->kts - na, m->kts - nb);
	}
	qsort(below, judged, sizeof(below[0]), cmp64);
	qsort(above, judged, sizeof(above[0]), cmp64);
	printf("ftrace %s: margins (kernel timestamp inside [before - err, after + err]): "
	       "below smallest %" PRId64 " ns, median %" PRId64 " ns; above smallest %" PRId64
	       " ns, median %" PRId64 " ns\n", tc, judged ? below[0] : 0,
	       judged ? below[judged / 2] : 0, judged ? above[0] : 0, judged ? above[judged / 2] : 0);
	printf("ftrace %s (CLOCK_%s): %d markers written, %" PRIu64 " found in the trace, %"
	       PRIu64 " outside [before - err, after + err] (worst %" PRId64 " ns), %" PRIu64
	       " conversions failed; widest bound %" PRId64 " ns, widest interval %" PRId64
	       " ns\n", tc, clocks[c].name, MARKERS, found, outside, worst, errors, max_err,
	       max_width);
	snprintf(out + strlen(out), outlen - strlen(out),
		 " %s_markers=%d %s_found=%" PRIu64 " %s_outside=%" PRIu64
		 " %s_worst_miss_ns=%" PRId64 " %s_errors=%" PRIu64 " %s_max_err_ns=%" PRId64
		 " %s_max_interval_ns=%" PRId64 " %s_margin_below_ns=%" PRId64
		 " %s_margin_above_ns=%" PRId64, tc, MARKERS, tc, found, tc, outside, tc, worst,
		 tc, errors, tc, max_err, tc, max_width, tc, judged ? below[0] : 0, tc,
		 judged ? above[0] : 0);
}

/* Sleep in S3 for 2-3 s (the RTC wakes the guest at a whole second): BOOTTIME moves ahead of
 * MONOTONIC by that much. Returns the ns it moved. */
static int64_t suspend_once(void)
{
	int64_t before = now(CLOCK_BOOTTIME) - now(CLOCK_MONOTONIC);

	write_kernel_file("/sys/class/rtc/rtc0/wakealarm", "0", O_TRUNC);
	if (write_kernel_file("/sys/class/rtc/rtc0/wakealarm", "+3", O_TRUNC) < 0 ||
	    write_kernel_file("/sys/power/state", "mem", O_TRUNC) < 0)
		return 0;
	return now(CLOCK_BOOTTIME) - now(CLOCK_MONOTONIC) - before;
}

int main(void)
{
	struct timex tx = { .modes = ADJ_TAI, .constant = TAI_OFFSET };
	struct fts_info info = { .size = sizeof(info) };
	char list[512], opt[128], tested[64] = "", fields[2048] = "";
	int raw, ntested = 0;
	int64_t res, slept, tai_rt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!kernel_cmdline_has("fts.scenario=")) {
		fprintf(stderr, "guest_ftrace: not in the lab's guest (no fts.scenario= on the "
			"kernel command line); it would suspend this machine and set its TAI "
			"offset\n");
		return 2;
	}
	if (find_tracefs() < 0) {
		printf("FTS-SKIP the guest kernel has no tracefs (neither /sys/kernel/tracing nor "
		       "debugfs's tracing/ could be mounted)\n");
		printf("FTS-RESULT scenario=ftrace skip=no-tracefs\n");
		return 0;
	}
	if (read_trace("trace_clock", list, sizeof(list)) < 0) {
		printf("FTS-SKIP %s/trace_clock cannot be read: %s\n", dir, strerror(errno));
		printf("FTS-RESULT scenario=ftrace skip=trace_clock-unreadable\n");
		return 0;
	}
	printf("ftrace: tracefs at %s, trace_clock offers: %s\n", dir, list);
	for (size_t c = 0; c < NCLOCKS; c++)
		if (offered(list, clocks[c].trace))
			ntested++;
	if (!ntested) {
		printf("FTS-SKIP the guest kernel's trace_clock offers none of mono, mono_raw, boot, "
		       "tai (%s)\n", list);
		printf("FTS-RESULT scenario=ftrace skip=no-matching-trace-clock\n");
		return 0;
	}
	if (adjtimex(&tx) < 0) {
		printf("FTS-RESULT scenario=ftrace error=adjtimex-ADJ_TAI-errno-%d\n", errno);
		return 2;
	}
	slept = suspend_once();
	tai_rt = now(CLOCK_TAI) - now(CLOCK_REALTIME);
	printf("ftrace: boottime - monotonic moved by %.3f s in a suspend; tai - realtime %.3f s\n",
	       (double)slept / 1e9, (double)tai_rt / 1e9);

	if (fts_get_info(&info) < 0 || strcmp(info.backend, "tsc")) {
		printf("FTS-RESULT scenario=ftrace error=backend-not-tsc backend=%s\n", info.backend);
		return 2;
	}
	if (fts_clock_start() < 0) {
		printf("FTS-RESULT scenario=ftrace error=fts_clock_start-errno-%d\n", errno);
		return 2;
	}
	/* Nanoseconds where the kernel can print them: the raw option. */
	raw = write_trace("trace_options", "raw") == 0 &&
	      read_trace("options/raw", opt, sizeof(opt)) == 0 && opt[0] == '1';
	res = raw ? 1 : 1000;
	printf("ftrace: timestamps read %s\n", raw ? "in ns (trace option raw)" :
	       "in us (no raw option): the kernel's ns lie in [printed, printed + 999]");

	for (size_t c = 0; c < NCLOCKS; c++) {
		if (!offered(list, clocks[c].trace)) {
			printf("ftrace %s: not offered by this kernel\n", clocks[c].trace);
			continue;
		}
		run_clock(c, raw, res, fields, sizeof(fields));
		snprintf(tested + strlen(tested), sizeof(tested) - strlen(tested), "%s%s",
			 tested[0] ? "," : "", clocks[c].trace);
	}
	write_trace("trace_options", "noraw");
	printf("FTS-RESULT scenario=ftrace fault_ok=1 tested=%s resolution_ns=%" PRId64
	       " suspended_ns=%" PRId64 " tai_minus_rt_ns=%" PRId64 " backend=%s%s\n", tested,
	       res, slept, tai_rt, info.backend, fields);
	return 0;
}
