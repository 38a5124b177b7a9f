/* tracelog - a program traced with faststamp's events: a span around each request,
 * with an instant inside it, in two threads, written to a trace file that converts
 * later, in another process, on any clock:
 *
 *     tracelog run.fts 1000
 *     faststamp trace run.fts --clock monotonic
 *     faststamp trace run.fts --format json --out run.json    # Perfetto, chrome://tracing
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <faststamp.h>

static int request, chunk;
static long n;

static void *serve(void *arg)
{
	uint64_t base = (uintptr_t)arg;

	for (long i = 0; i < n; i++) {
		uint64_t id = base + (uint64_t)i;
		fts_span_begin(request, id);
		for (int k = 0; k < 3; k++)
			fts_event(chunk, id, (uint64_t)k * 512);
		fts_span_end(request, id);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	struct fts_trace_stats st = { .size = sizeof(st) };

	if (argc != 3 || (n = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: tracelog TRACE COUNT\n");
		return 2;
	}
	/* types first (any thread, any time before their events) */
	if ((request = fts_event_define("request", "id")) < 0 ||
	    (chunk = fts_event_define("chunk", "id,offset")) < 0) {
		perror("tracelog: fts_event_define");
		return 1;
	}
	if (fts_trace_start(argv[1]) < 0) {
		fprintf(stderr, "tracelog: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (pthread_create(&t, NULL, serve, (void *)(uintptr_t)1000000) != 0)
		return 1;
	serve(NULL);
	pthread_join(t, NULL);
	if (fts_trace_stop() < 0)
		perror("tracelog: fts_trace_stop");
	fts_trace_stats(&st);
	printf("%llu events, %llu dropped, %llu lost\n", (unsigned long long)st.events,
	       (unsigned long long)st.dropped, (unsigned long long)st.lost);
	return st.lost ? 1 : 0;
}
