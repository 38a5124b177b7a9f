/* A program built against the installed faststamp, as a user would build it. */
#define _POSIX_C_SOURCE 200809L
#include <faststamp.h>
#include <stdio.h>

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
	printf("consumer: %lld.%09ld +- %lld ns\n", (long long)ts.tv_sec, ts.tv_nsec, (long long)err);
	return 0;
}
