/* onethread.c - preloaded (LD_PRELOAD) into the tests labelled unit alone, in the
 * native builds: a unit test is one thread of pure computation, so the stages leave
 * it out of ThreadSanitizer's run (there is nothing for it to find). A unit test that
 * starts a thread (its own, or the library's sampler) stops here with a message
 * instead: give it the label concurrency or realclock (tests/CMakeLists.txt), so that
 * TSan runs it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((visibility("default")))
int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	static const char m[] = "onethread: a test labelled unit alone started a thread: "
				"label it concurrency or realclock (tests/CMakeLists.txt)\n";
	(void)t;
	(void)a;
	(void)fn;
	(void)arg;
	if (write(2, m, sizeof(m) - 1) < 0)
		abort();
	abort();
}
