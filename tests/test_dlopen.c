/* test_dlopen.c - a plug-in host: dlopen the shared library, convert (which starts
 * the sampler thread), dlclose, again and again, with time for the thread to wake in
 * between. The library must not be unmapped under its own thread. Links nothing of
 * the library: it sees only what dlopen gives. Exit 0 when the process survives. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

typedef int (*start_fn)(void);
typedef int (*convert_fn)(const uint64_t *, int64_t *, int64_t *);

int main(void)
{
	for (int cycle = 0; cycle < 5; cycle++) {
		void *h = dlopen(FTS_SHARED_LIB, RTLD_NOW | RTLD_LOCAL);
		struct timespec pause = { 0, 300000000 };   /* three sampler rounds */
		start_fn start;
		convert_fn convert;
		uint64_t tagged = (UINT64_C(1) << 63) | 12345;
		int64_t ns, err;

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		start = (start_fn)(uintptr_t)dlsym(h, "fts_clock_start");
		convert = (convert_fn)(uintptr_t)dlsym(h, "fts_convert");
		if (!start || !convert || start() < 0 || convert(&tagged, &ns, &err) < 0 || ns != 12345) {
			fprintf(stderr, "cycle %d: the library's calls failed\n", cycle);
			return 1;
		}
		if (dlclose(h)) {
			fprintf(stderr, "dlclose: %s\n", dlerror());
			return 1;
		}
		nanosleep(&pause, NULL);
		printf("cycle %d: dlopen, fts_clock_start (sampler started), dlclose, 300 ms: alive\n",
		       cycle);
	}
	return 0;
}
