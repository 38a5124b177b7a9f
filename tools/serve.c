/* faststamp serve - the machine's one calibration sampler: it publishes the process
 * clock's history in sealed memory, handed out at a unix socket, that every process
 * converting stamps maps and uses. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faststamp.h"
#include "faststamp/config.h"
#include "internal.h"
#include "tool.h"
#include "clock.h"

static const char usage[] =
	"usage: faststamp serve [--path PATH] [--record FILE] [--interval-ms N]\n"
	"  Be the machine's one calibration sampler: sample the counter against\n"
	"  CLOCK_REALTIME every N ms and publish the history at PATH, where every process\n"
	"  that converts stamps finds it at its first conversion and uses it instead of\n"
	"  calibrating its own (FASTSTAMP_SHARED names another path, or 0 for none).\n"
	"  The history is sealed memory (memfd) no one can shrink or write but serve; PATH\n"
	"  is a unix socket that hands it out. If PATH is removed or replaced, serve puts\n"
	"  its socket back within 100 ms and says so.\n"
	"  --path PATH      the socket to publish at (default " FTS_SHARED_PATH "); its\n"
	"                   directory must be this user's and writable by no one else,\n"
	"                   each directory above it root's or this user's and writable\n"
	"                   by no one else unless sticky; only a socket no publisher\n"
	"                   answers at is replaced there, never a file of another kind\n"
	"  --record FILE    also append every sample and event to FILE, a history file that\n"
	"                   converts any process's stamps later (faststamp convert); a\n"
	"                   symbolic link is not followed\n"
	"  --interval-ms N  sampling period, 1..60000 (default 100); the heartbeat readers\n"
	"                   check comes at least every 100 ms whatever N is\n"
	"Runs in the foreground until SIGTERM or SIGINT, then marks the history stopped\n"
	"and removes its socket.\n"
	"Exit 0 when stopped by a signal, 1 on a failure (another instance publishes at\n"
	"PATH; the counter became untrusted; PATH's directory became unusable, or PATH\n"
	"became another publisher's socket), 2 on a usage error.\n";

/* What is wrong with the path to publish at (sock) or the file to record in, found
 * before any sampling (the publisher would find a directory only at its rename, with
 * PATH.lock made beside it); NULL when nothing is. What else is at PATH, the publisher
 * judges (it replaces nothing but a socket no publisher answers at); a symbolic link
 * at FILE is not followed. */
static const char *bad_file(const char *path, int sock)
{
	struct stat st;

	if (path[strlen(path) - 1] == '/')
		return "ends in '/': it names the file, not its directory";
	if (lstat(path, &st) < 0)
		return NULL;
	if (S_ISDIR(st.st_mode))
		return "Is a directory: it names the file, not its directory";
	if (sock)
		return NULL;
	if (S_ISLNK(st.st_mode))
		return "a symbolic link (not followed)";
	return S_ISREG(st.st_mode) ? NULL : "exists and is not a regular file";
}

int fts_tool_serve(int argc, char **argv)
{
	enum { OPT_PATH, OPT_RECORD, OPT_INTERVAL_MS, OPT_N };
	static const char *const names[OPT_N] = {
		[OPT_PATH] = "--path", [OPT_RECORD] = "--record", [OPT_INTERVAL_MS] = "--interval-ms",
	};
	struct fts_tool_opts opts = FTS_TOOL_OPTS("serve", usage, names, OPT_N);
	const char *path = FTS_SHARED_PATH, *record = NULL;
	uint64_t interval_ms = 100;
	struct fts_info in = { .size = sizeof(in) };
	struct fts__clock_state cs;
	const char *why;
	sigset_t stop;
	char err[512];
	unsigned seq = 0;
	int sig = 0, failed;

	for (int i = 1; i < argc; i++) {
		const char *v;
		switch (fts_tool_opt(&opts, argc, argv, &i, &v)) {
		case OPT_PATH:
			if (!*v)
				return fts_tool_usage_error("serve", usage, "%s", "--path needs a file name");
			path = v;
			break;
		case OPT_RECORD:
			if (!*v)
				return fts_tool_usage_error("serve", usage, "%s", "--record needs a file name");
			record = v;
			break;
		case OPT_INTERVAL_MS:
			if (fts_tool_parse_u64(v, 1, 60000, &interval_ms) < 0)
				return fts_tool_usage_error("serve", usage, "bad --interval-ms '%s' (1..60000)", v);
			break;
		case FTS_OPT_ARG:
			return fts_tool_usage_error("serve", usage, "unexpected argument '%s'", v);
		case FTS_OPT_END:
			break;
		case FTS_OPT_HELP:
			return 0;
		default:
			return 2;
		}
	}
	if ((why = bad_file(path, 1))) {
		fprintf(stderr, "faststamp serve: --path %s: %s\n", path, why);
		return 1;
	}
	if (record && (why = bad_file(record, 0))) {
		fprintf(stderr, "faststamp serve: --record %s: %s\n", record, why);
		return 1;
	}
	if (fts_get_info(&in) == 0 && !strcmp(in.backend, "generic")) {
		fprintf(stderr, "faststamp serve: no counter in use: the backend is generic (%s); "
			"stamps are clock readings, with nothing to calibrate or publish\n",
			FTS_TOOL_CLEAN(in.reason));
		return 1;
	}
	/* The signals that stop it are taken here, by sigtimedwait, and by no thread. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	if (fts__clock_serve(path, (int64_t)interval_ms * 1000000, err, sizeof(err)) < 0) {
		fprintf(stderr, "faststamp serve: %s\n", err);
		return 1;
	}
	if (record && fts_clock_record(record) < 0) {
		int e = errno;
		fprintf(stderr, "faststamp serve: --record %s: %s\n", record,
			e == EEXIST ? "the file holds something else than a record of this boot "
				      "and counter (or one of format 1, which is not appended to)"
			: e == EBUSY ? "another process records in it"
			: e == ELOOP ? "a symbolic link (not followed)" : strerror(e));
		fts__clock_serve_stop("its record could not be written");
		return 1;
	}
	printf("faststamp serve: publishing %s (pid %ld), sampling every %llu ms%s%s\n", path,
	       (long)getpid(), (unsigned long long)interval_ms, record ? ", recording to " : "",
	       record ? record : "");
	fflush(stdout);
	for (;;) {
		/* 100 ms: what the publisher says about its path is said at once */
		struct timespec tick = { 0, 100000000 };
		sig = sigtimedwait(&stop, NULL, &tick);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (fts__clock_serve_news(&seq, err, sizeof(err), &failed)) {
			fprintf(stderr, "faststamp serve: %s\n", err);
			if (failed) {
				fprintf(stderr, "faststamp serve: exiting: it no longer publishes "
					"at %s\n", path);
				fts_clock_record(NULL);
				fts__clock_serve_stop("its path could not be published at any more");
				return 1;
			}
		}
		fts__clock_state(&cs);
		if (cs.faulted) {
			fprintf(stderr, "faststamp serve: the counter is no longer trusted: %s\n",
				cs.fault);
			fts_clock_record(NULL);
			return 1;
		}
	}
	if (record && fts_clock_record(NULL) < 0)
		fprintf(stderr, "faststamp serve: --record %s: %s\n", record, strerror(errno));
	fts__clock_serve_stop(sig == SIGTERM ? "stopped by SIGTERM" : "stopped by SIGINT");
	printf("faststamp serve: stopped (%s)\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	return 0;
}
