/* faststamp history - what a history file holds. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "faststamp.h"
#include "histfile.h"
#include "tool.h"

static const char usage[] =
	"usage: faststamp history FILE\n"
	"  Summarise a history file (fts_clock_record, fts_clock_save, fts_calib_save):\n"
	"  its kind and format, the clocks it holds (format 3: every clock of the process\n"
	"  clock; older files and fts_calib_save's: CLOCK_REALTIME alone), the counter and\n"
	"  boot it belongs to, its samples or segments, the time it spans, and the steps,\n"
	"  suspends and counter faults recorded in it.\n"
	"Exit 0, 1 when the file cannot be read or is not a history, 2 on a usage error.\n";

static void print_utc(const char *label, int64_t ns)
{
	char day[32];

	if (ns < 0 || fts_tool_utc(ns / 1000000000, day, sizeof(day)) < 0)
		printf("%-12s %" PRId64 " ns\n", label, ns);
	else
		printf("%-12s %s.%09" PRId64 "Z\n", label, day, ns % 1000000000);
}

int fts_tool_history(int argc, char **argv)
{
	struct fts__fileinfo fi;
	struct fts_calib *cs[FTS_TOOL_NCLK], *c;
	const char *path = NULL;
	char held[128];
	uint64_t o, n;
	int64_t ro, rn;
	uint8_t here[16];

	struct fts_tool_opts opts = { "history", usage, NULL, 0, 0, 0, 0 };   /* no options */
	for (int i = 1; i < argc; i++) {
		const char *v;
		int k = fts_tool_opt(&opts, argc, argv, &i, &v);
		if (k == FTS_OPT_END)
			continue;
		if (k != FTS_OPT_ARG)
			return FTS_OPT_EXIT(k);
		if (path)
			return fts_tool_usage_error("history", usage, "one FILE only ('%s')", v);
		path = v;
	}
	if (!path)
		return fts_tool_usage_error("history", usage, "%s", "FILE is required");
	if (fts_tool_load_clocks("history", path, cs, &fi) < 0)
		return 1;
	c = cs[0];
	fts__histfile_boot_id(here);
	printf("file:        %s\n", FTS_TOOL_CLEAN(path));
	printf("kind:        %s\n", fi.saved ? "saved history" : "record of the process clock");
	printf("format:      %u\n", fi.version);
	printf("clocks:      %s%s\n", fts_tool_file_clocks(&fi, held, sizeof(held)),
	       !fi.plain ? "" : fi.version < 3 ? " (formats 1 and 2 hold no other)"
			: " (one history, read as CLOCK_REALTIME's)");
	printf("counter:     %s", fi.head.kind < FTS__KIND_N ? fts__histfile_kind_names[fi.head.kind] : "unknown");
	if (fi.head.counter_hz)
		printf(" at %.6f MHz", (double)fi.head.counter_hz / 1e6);
	printf("\nclocksource: %s\n", fi.head.clocksource[0] ? FTS_TOOL_CLEAN(fi.head.clocksource)
							    : "(not recorded)");
	printf("boot id:     ");
	for (int i = 0; i < 16; i++)
		printf("%02x%s", fi.head.boot_id[i], i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
	printf(" (%s)\n", !memcmp(here, fi.head.boot_id, 16) ? "this boot"
			  : "another boot: stamps of this boot do not convert with it");
	print_utc("written:", fi.head.created_ns);
	if (fi.saved)
		printf("segments:    %" PRIu64 "\n", fi.segments);
	else
		printf("samples:     %" PRIu64 " (%zu knots kept)\n", fi.samples, fts_calib_count(c));
	for (int k = 1; k < FTS_TOOL_NCLK; k++)
		if (cs[k])
			printf("%-12s %zu knots\n", fts_tool_clock_arg[k], fts_calib_count(cs[k]));
	if (fts_calib_range(c, &o, &n) == 0 && fts_calib_convert(c, o, &ro, NULL) == 0 &&
	    fts_calib_convert(c, n, &rn, NULL) == 0) {
		print_utc("from:", ro);
		print_utc("to:", rn);
		printf("span:        %.3f s (counter %" PRIu64 " to %" PRIu64 ")\n",
		       (double)(rn - ro) / 1e9, o, n);
	}
	printf("events:      %" PRIu64 " steps, %" PRIu64 " suspends, %" PRIu64 " counter faults\n",
	       fi.events[FTS__EV_STEP], fi.events[FTS__EV_SUSPEND], fi.events[FTS__EV_FAULT]);
	if (fi.events[FTS__EV_STEP] + fi.events[FTS__EV_SUSPEND] + fi.events[FTS__EV_FAULT])
		printf("first:       %s (%" PRId64 " ns) at counter %" PRIu64 "\n",
		       FTS_TOOL_CLEAN(fi.first_event.what),
		       fi.first_event.value_ns, fi.first_event.counter);
	if (fi.blocks_skipped)
		printf("skipped:     %" PRIu64 " optional blocks (a trace's events, or a newer "
		       "format's)\n", fi.blocks_skipped);
	if (fi.cut)
		printf("cut short:   the file ends inside a block; read up to byte %" PRIu64
		       ", its last whole block\n", fi.whole);
	for (int k = 0; k < FTS_TOOL_NCLK; k++)
		fts_calib_free(cs[k]);
	return 0;
}
