/* faststamp info - what the clock runs on, and why. */
#include <stdio.h>
#include <string.h>

#include "faststamp.h"
#include "tool.h"

static const char usage[] =
	"usage: faststamp info [--calibrate]\n"
	"  Print the backend and why it was chosen, the counter and its frequency, the\n"
	"  kernel clocksource, the CPU flags that matter and the calibration history\n"
	"  (the machine's shared one, or this process's own, and why).\n"
	"  --calibrate  take the first calibration samples before printing\n";

int fts_tool_info(int argc, char **argv)
{
	struct fts_info in = { .size = sizeof(in) };
	int calibrate = 0;

	enum { OPT_CALIBRATE, OPT_N };
	static const char *const names[OPT_N] = { [OPT_CALIBRATE] = "--calibrate" };
	struct fts_tool_opts opts = FTS_TOOL_OPTS("info", usage, names, OPT_CALIBRATE);
	for (int i = 1; i < argc; i++) {
		const char *v;
		int k = fts_tool_opt(&opts, argc, argv, &i, &v);
		if (k == FTS_OPT_ARG)
			return fts_tool_usage_error("info", usage, "unexpected argument '%s'", v);
		if (k == FTS_OPT_END)
			continue;
		if (k < 0)
			return FTS_OPT_EXIT(k);
		if (k == OPT_CALIBRATE)
			calibrate = 1;
	}
	if (calibrate && fts_clock_start() < 0)
		perror("faststamp info: calibration");
	if (fts_get_info(&in) < 0) {
		perror("faststamp info");
		return 1;
	}
	printf("backend:       %s\n", FTS_TOOL_CLEAN(in.backend));
	printf("reason:        %s\n", FTS_TOOL_CLEAN(in.reason));
	if (in.env_backend[0])
		printf("environment:   FASTSTAMP_BACKEND=\"%s\"%s\n", FTS_TOOL_CLEAN(in.env_backend),
		       in.env_ignored ? " (unknown or unavailable here: ignored, automatic choice kept)"
				      : "");
	printf("counter:       %s\n", in.counter[0] ? FTS_TOOL_CLEAN(in.counter) : "(none)");
	if (in.counter_hz)
		printf("frequency:     %.6f MHz\n", (double)in.counter_hz / 1e6);
	printf("freq source:   %s\n", FTS_TOOL_CLEAN(in.freq_source));
	printf("clocksource:   %s\n",
	       in.clocksource[0] ? FTS_TOOL_CLEAN(in.clocksource) : "(unreadable)");
	printf("across CPUs:   %s", FTS_TOOL_CLEAN(in.proof));
	if (in.cpu_skew_ns > 0)
		printf("; bounds widened by %lld ns for offsets between CPUs",
		       (long long)in.cpu_skew_ns);
	printf("\n");
	if (in.clock_res_ns > 0)
		printf("resolution:    the clocks move in steps of %lld ns (a coarse clocksource):"
		       " each read's bracket widened by one\n", (long long)in.clock_res_ns);
	printf("cpu flags:     %s\n", in.cpu_flags[0] ? FTS_TOOL_CLEAN(in.cpu_flags) : "(none)");
	if (!in.history_source[0] && in.history_path[0])
		printf("history:       none yet (the first conversion uses the shared one at %s "
		       "if it can)\n", FTS_TOOL_CLEAN(in.history_path));
	else if (!in.history_source[0])
		printf("history:       none yet (FASTSTAMP_SHARED=0: the first conversion "
		       "calibrates this process's own)\n");
	else if (!strcmp(in.history_source, "shared"))
		printf("history:       shared, %s (faststamp serve)\n", FTS_TOOL_CLEAN(in.history_path));
	else
		printf("history:       process%s%s%s%s\n", in.history_path[0] ? ", publishing " : "",
		       FTS_TOOL_CLEAN(in.history_path), in.history_note[0] ? "; not the shared one: " : "",
		       FTS_TOOL_CLEAN(in.history_note));
	printf("samples held:  %zu (taken %llu), history %.3f s, sampler %s\n", in.samples,
	       (unsigned long long)in.samples_taken, (double)in.history_ns / 1e9,
	       in.sampler_running ? "running" : "idle");
	printf("events:        %llu wall-clock steps, %llu suspends seen; the last one's span "
	       "of ambiguity %.0f us\n",
	       (unsigned long long)in.steps_seen, (unsigned long long)in.suspends_seen,
	       (double)in.step_window_ns / 1e3);
	printf("other clocks:  minus CLOCK_REALTIME now: TAI %+.9f s, MONOTONIC %+.9f s, "
	       "BOOTTIME %+.9f s, MONOTONIC_RAW %+.9f s\n", (double)in.tai_offset_ns / 1e9,
	       (double)in.mono_offset_ns / 1e9, (double)in.boot_offset_ns / 1e9,
	       (double)in.raw_offset_ns / 1e9);
	if (in.clock_esterror_ns >= 0)
		printf("system clock:  %s; kernel's estimated error %.3f ms, maximum %.3f ms (adjtimex)\n",
		       in.clock_synced ? "synchronised" : "NOT synchronised",
		       (double)in.clock_esterror_ns / 1e6, (double)in.clock_maxerror_ns / 1e6);
	else
		printf("system clock:  adjtimex unavailable\n");
	return 0;
}
