/* A program built against the installed faststamp, as a user would build it. */
#define _POSIX_C_SOURCE 200809L
#include <faststamp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* An event traced, read back: the macros of 0-4 fields compile as the user writes them
 * (with -std=c11, not gnu11). 0 or 1. */
static int trace_one(void)
{
	char path[] = "/tmp/fts-consumer-XXXXXX";
	struct fts_trace_event ev;
	struct fts_trace *t;
	int fd = mkstemp(path), type = fts_event_define("consumer", "a,b"), n = 0;

	if (fd < 0 || type < 0)
		return 1;
	close(fd);
	unlink(path);
	if (fts_trace_start(path) < 0 || fts_event(type) < 0 || fts_event(type, 1) < 0 ||
	    fts_span_begin(type, 1, 2) < 0 || fts_span_end(type) < 0 || fts_trace_stop() < 0 ||
	    !(t = fts_trace_open(path, CLOCK_REALTIME)))
		return 1;
	while (fts_trace_next(t, &ev) == 1 && ev.error == 0)
		n++;
	fts_trace_close(t);
	unlink(path);
	return n != 4;
}

int main(void)
{
	fast_timestamp_t s;
	struct timespec before, ts;
	int64_t ns, err;

	clock_gettime(CLOCK_REALTIME, &before);
	store_fast_timestamp(&s);
	if (fast_timestamp_to_timespec(&s, &ts) < 0 || fts_convert(&s, &ns, &err) < 0) {
		perror("consumer");
		return 1;
	}
	/* the converted time is not before the clock read that preceded the stamp (1 us slack) */
	if (ts.tv_sec < before.tv_sec - 1 || err < 0) {
		fprintf(stderr, "consumer: implausible conversion\n");
		return 1;
	}
	if (trace_one()) {
		perror("consumer: a traced event");
		return 1;
	}
	printf("consumer: %lld.%09ld +- %lld ns\n", (long long)ts.tv_sec, ts.tv_nsec, (long long)err);
	return 0;
}
