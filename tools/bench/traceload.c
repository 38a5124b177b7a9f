/* traceload.c - `faststamp bench --trace-load RATE [SECONDS [DIR]]`: one writer thread,
 * pinned to a CPU, stamps RATE events a second (two fields each) for SECONDS into a
 * trace in DIR, while the library's drain runs where the scheduler puts it (the other
 * CPU of two); then the trace is stopped and counted. Says whether the drain kept up:
 * every event produced written, none dropped (a full ring) or lost (a failed write).
 *
 * Owns: its own run, start to end, and its lines of output. May not: touch the cost
 * rounds' state (it runs instead of them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_int.h"
#include "tool.h"

#define CHUNK 64   /* events between two looks at the clock */

static double cpu_s(clockid_t id)
{
	return (double)fts_tool_now(id) / 1e9;
}

int bench_trace_load(int argc, char **argv)
{
	uint64_t rate, secs = 5, produced = 0, refused = 0, other = 0;
	const char *dir = argc > 4 ? argv[4] : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	struct fts_trace_stats st = { .size = sizeof(st) };
	char path[4096];
	struct stat sb;
	int a, b, type, fd;
	double cpu0, wcpu0, cpu, wcpu, wall;
	int64_t t0, t;

	if (argc < 3 || argc > 5 || fts_tool_parse_u64(argv[2], 1, UINT64_C(1) << 30, &rate) < 0 ||
	    (argc > 3 && fts_tool_parse_u64(argv[3], 1, 3600, &secs) < 0))
		return fts_tool_usage_error("bench", bench_usage, "%s",
					    "--trace-load RATE [SECONDS [DIR]]: RATE 1..2^30 events "
					    "a second, SECONDS 1..3600");
	if (snprintf(path, sizeof(path), "%s/faststamp-load-XXXXXX", dir) >= (int)sizeof(path))
		return fts_tool_usage_error("bench", bench_usage, "%s", "DIR is too long");
	if ((fd = mkstemp(path)) < 0) {
		fprintf(stderr, "faststamp bench: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	close(fd);
	unlink(path);
	if ((type = fts_event_define("load", "i,t")) < 0 || fts_trace_start(path) < 0) {
		fprintf(stderr, "faststamp bench: trace %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (bench_two_cpus(&a, &b) == 0)
		fts_tool_pin(a);
	fts_event(type, 0, 0);   /* the thread's ring made before the clock starts */
	fts_trace_drain();
	cpu0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
	wcpu0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
	t0 = fts_tool_now(CLOCK_MONOTONIC);
	/* paced: never ahead of RATE, catching up at full speed when behind */
	for (uint64_t total = rate * secs; produced < total;) {
		t = fts_tool_now(CLOCK_MONOTONIC) - t0;
		if ((double)produced >= (double)t * 1e-9 * (double)rate)
			continue;
		for (int k = 0; k < CHUNK && produced < total; k++, produced++) {
			if (fts_event(type, produced, (uint64_t)t) == 0)
				continue;
			if (errno == ENOBUFS)
				refused++;
			else
				other++;
		}
	}
	wall = (double)(fts_tool_now(CLOCK_MONOTONIC) - t0) / 1e9;
	wcpu = cpu_s(CLOCK_THREAD_CPUTIME_ID) - wcpu0;
	if (fts_trace_stop() < 0)
		fprintf(stderr, "faststamp bench: the trace ended with an error: %s\n", strerror(errno));
	cpu = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	fts_trace_stats(&st);
	if (stat(path, &sb) < 0)
		sb.st_size = 0;
	unlink(path);
	printf("trace load: %llu events a second asked for %llu s, into %s\n",
	       (unsigned long long)rate, (unsigned long long)secs, dir);
	printf("  produced     %llu in %.3f s: %.2f M events a second\n",
	       (unsigned long long)produced, wall, (double)produced / wall / 1e6);
	printf("  written      %llu (%llu bytes)\n", (unsigned long long)st.events,
	       (unsigned long long)sb.st_size);
	printf("  dropped      %llu (a full ring; the writer saw %llu refused)\n",
	       (unsigned long long)st.dropped, (unsigned long long)refused);
	printf("  lost         %llu (failed writes)\n", (unsigned long long)st.lost);
	printf("  other errors %llu\n", (unsigned long long)other);
	printf("  CPU          writer %.3f s (its pacing included); the rest (the drain, the "
	       "sampler) %.3f s: %.1f ns an event written\n", wcpu, cpu - wcpu,
	       st.events ? (cpu - wcpu) * 1e9 / (double)st.events : 0.0);
	/* the first event (before the clock) is counted by the trace too */
	if (st.events + st.dropped != produced + 1 || other) {
		printf("  MISMATCH: produced + 1 != written + dropped\n");
		return 1;
	}
	printf("  %s\n", st.dropped || st.lost ? "the drain did NOT keep up" : "kept up: none dropped or lost");
	return st.dropped || st.lost ? 1 : 0;
}
