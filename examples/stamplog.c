/* stamplog - the pattern deferred conversion is for: store raw stamps in a binary log
 * as events happen (8 bytes each, one counter read), record the clock beside them, and
 * turn the log into times later, in another process:
 *
 *     stamplog events.bin clock.fth 100000
 *     faststamp convert --history clock.fth --in events.bin --binary --format iso
 *
 * With a third file it also writes, for each stamp, the clock_gettime(CLOCK_REALTIME)
 * reads just before and after it ("BEFORE AFTER" in ns, a line each): the test holds
 * every converted time to that bracket. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <faststamp.h>

static int64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	FILE *log, *brackets = NULL;
	long n;

	if (argc < 4 || argc > 5 || (n = strtol(argv[3], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: stamplog LOG HISTORY COUNT [BRACKETS]\n");
		return 2;
	}
	if (!(log = fopen(argv[1], "wb")) || (argc == 5 && !(brackets = fopen(argv[4], "w")))) {
		perror("stamplog: open");
		return 1;
	}
	/* From here on, every sample of the clock goes to the history file too. */
	if (fts_clock_record(argv[2]) < 0) {
		/* ENOTSUP: no counter, the stamps would be clock readings, needing no history */
		perror("stamplog: fts_clock_record");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		unsigned char w[8];
		fast_timestamp_t s;
		int64_t t0 = brackets ? now() : 0;

		store_fast_timestamp(&s);   /* the hot path: one counter read */
		if (brackets)
			fprintf(brackets, "%lld %lld\n", (long long)t0, (long long)now());
		for (int k = 0; k < 8; k++)
			w[k] = (unsigned char)(s >> (8 * k));
		fwrite(w, 1, sizeof(w), log);
		if (i % 1000 == 999) {   /* events come and go over a few seconds */
			struct timespec pause = { 0, 2000000 };
			nanosleep(&pause, NULL);
		}
	}
	if (fts_clock_record(NULL) < 0) {
		perror("stamplog: recording");
		return 1;
	}
	if (fclose(log) || (brackets && fclose(brackets))) {
		perror("stamplog: close");
		return 1;
	}
	return 0;
}
