/* faststamp - inspect, check and use fast timestamps. One file per subcommand. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "faststamp.h"
#include "tool.h"

static const struct fts_tool_cmd cmds[] = {
	{ "info", "backend, counter frequency, clocksource, history", fts_tool_info },
	{ "check", "self-test: accuracy against the system clock and cost", fts_tool_check },
	{ "bench", "cost of every way to tell the time, scaling, accuracy", fts_tool_bench },
	{ "rx", "receive UDP, stamp each datagram, write pcap/pcapng", fts_tool_rx },
	{ "tx", "send numbered, time-stamped UDP datagrams at a steady rate", fts_tool_tx },
	{ "convert", "stamps to times, with a history file", fts_tool_convert },
	{ "history", "what a history file holds", fts_tool_history },
	{ "serve", "the machine's one calibration, published for every process", fts_tool_serve },
	{ "trace", "a trace file's events as text or JSON, on any clock", fts_tool_trace },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: faststamp COMMAND [OPTIONS]\n"
		   "       faststamp COMMAND --help\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\nfaststamp %s; see faststamp(1).\n", FTS_VERSION_STRING);
}

/* Every command's output is its result: one that did not reach standard output (a full
 * disk, /dev/full, a closed descriptor) fails the command, whatever it returned. */
static int flushed(int rc)
{
	int e = fflush(stdout) == EOF ? errno : 0;

	if (e || ferror(stdout)) {
		fprintf(stderr, "faststamp: writing the output: %s\n", strerror(e ? e : EIO));
		return rc ? rc : 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return flushed(0);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("faststamp %s\n", FTS_VERSION_STRING);
		return flushed(0);
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return flushed(cmds[i].run(argc - 1, argv + 1));
	fprintf(stderr, "faststamp: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
