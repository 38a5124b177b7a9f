/* coldab - two builds of the library in one process, side by side after idle: each
 * loaded into a link namespace of its own (dlmopen), so that both run their own clock
 * and history, as two programs would, while every sleep of the one run is shared.
 *
 *   coldab OLD.so NEW.so [ROUNDS [old]]
 *
 * For each sleep (0.5, 3 and 10 ms), ROUNDS times (default 200): sleep, store a stamp,
 * time one fts_convert of it (with "old": of a stamp stored before the first sleep,
 * inside both builds' histories, which reads no clock); the builds and a
 * clock_gettime(CLOCK_REALTIME) take turns, in an order that rotates every round, each
 * after a sleep of its own. Prints,
 * per sleep, each one's p50 and p90 (ns, on the counter at its measured rate) and the
 * ratios: each build's p50 to clock_gettime's, and NEW's to OLD's. Counter builds on
 * x86_64 only (the timing reads the TSC). Exit 0, 1 when a build cannot be loaded or a
 * conversion fails, 2 on a usage error. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>

typedef int (*convert_fn)(const uint64_t *stamp, int64_t *ns, int64_t *err);

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static convert_fn load(const char *path)
{
	void *h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
	convert_fn f = h ? (convert_fn)dlsym(h, "fts_convert") : NULL;

	if (!f)
		fprintf(stderr, "coldab: %s: %s\n", path, dlerror());
	return f;
}

/* Counter ticks per ns, over 100 ms of CLOCK_MONOTONIC_RAW. */
static double ticks_per_ns(void)
{
	struct timespec a, b, d = { 0, 100000000 };
	uint64_t ta, tb;

	clock_gettime(CLOCK_MONOTONIC_RAW, &a);
	ta = __rdtsc();
	nanosleep(&d, NULL);
	clock_gettime(CLOCK_MONOTONIC_RAW, &b);
	tb = __rdtsc();
	return (double)(tb - ta) / ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec));
}

int main(int argc, char **argv)
{
	static const long gaps[] = { 500000, 3000000, 10000000 };
	convert_fn f[2];
	int rounds = argc > 3 ? atoi(argv[3]) : 200, old = argc > 4 && !strcmp(argv[4], "old");
	double *v[3], tpn;
	uint64_t s, s_old;
	int64_t ns;

	if (argc < 3 || argc > 5 || rounds < 10 || (argc == 5 && !old)) {
		fprintf(stderr, "usage: coldab OLD.so NEW.so [ROUNDS >= 10 [old]]\n");
		return 2;
	}
	if (!(f[0] = load(argv[1])) || !(f[1] = load(argv[2])))
		return 1;
	for (int j = 0; j < 3; j++)
		if (!(v[j] = malloc((size_t)rounds * sizeof(double))))
			return 1;
	s = __rdtsc();   /* the first conversions make each build's history */
	if (f[0](&s, &ns, NULL) < 0 || f[1](&s, &ns, NULL) < 0)
		return 1;
	s_old = __rdtsc();
	tpn = ticks_per_ns();   /* and a second of its samples pass */
	nanosleep(&(struct timespec){ 1, 0 }, NULL);
	printf("%-6s %-15s %-15s %-15s %8s %8s %8s\n", "sleep", "old p50 (p90)", "new p50 (p90)",
	       "clock p50 (p90)", "old x", "new x", "new/old");
	for (size_t g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
		for (int i = 0; i < rounds; i++) {
			for (int k = 0; k < 3; k++) {
				int who = (k + i) % 3;
				struct timespec ts = { 0, gaps[g] }, q;
				uint64_t t0, t1;
				int rc = 0;

				nanosleep(&ts, NULL);
				_mm_lfence();
				s = old ? s_old : __rdtsc();
				_mm_lfence();
				t0 = __rdtsc();
				if (who < 2)
					rc = f[who](&s, &ns, NULL);
				else
					clock_gettime(CLOCK_REALTIME, &q);
				t1 = __rdtsc();
				if (rc < 0)
					return 1;
				v[who][i] = (double)(t1 - t0) / tpn;
			}
		}
		for (int j = 0; j < 3; j++)
			qsort(v[j], (size_t)rounds, sizeof(double), cmp);
		printf("%4.1fms %6.0f (%5.0f)  %6.0f (%5.0f)  %6.0f (%5.0f)  %8.2f %8.2f %8.2f\n",
		       gaps[g] / 1e6, v[0][rounds / 2], v[0][rounds * 9 / 10], v[1][rounds / 2],
		       v[1][rounds * 9 / 10], v[2][rounds / 2], v[2][rounds * 9 / 10],
		       v[0][rounds / 2] / v[2][rounds / 2], v[1][rounds / 2] / v[2][rounds / 2],
		       v[1][rounds / 2] / v[0][rounds / 2]);
	}
	return 0;
}
#else
int main(void)
{
	fprintf(stderr, "coldab: x86_64 only\n");
	return 2;
}
#endif
