/* test_threads.c - several threads storing and converting while the history is being
 * refreshed (background sampler, plus a thread forcing samples). Stamps handed between
 * threads must convert in order: a stamp stored after seeing another is not earlier. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "faststamp.h"
#include "internal.h"

#define THREADS 4
#define ROUNDS 20000

static fast_timestamp_t shared_stamp;   /* handed between threads */
static int stop;

static int64_t rt(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct worker { unsigned seed; size_t bad, backwards, done; };

static void *work(void *arg)
{
	struct worker *w = arg;
	fast_timestamp_t old[64];
	int64_t old_t0[64], old_t1[64];
	for (int i = 0; i < ROUNDS; i++) {
		fast_timestamp_t seen, mine;
		int64_t t0 = rt(), t1, ns, err, ns_seen, k = i % 64;
		seen = __atomic_load_n(&shared_stamp, __ATOMIC_ACQUIRE);
		store_fast_timestamp(&mine);
		t1 = rt();
		__atomic_store_n(&shared_stamp, mine, __ATOMIC_RELEASE);
		old[k] = mine;
		old_t0[k] = t0;
		old_t1[k] = t1;
		if (fts_convert(&mine, &ns, &err) < 0 || ns + err < t0 || ns - err > t1)
			w->bad++;
		/* causality: mine was stored after seeing `seen` */
		if (seen && (mine < seen))
			w->backwards++;
		if (seen && fts_convert(&seen, &ns_seen, NULL) == 0 && ns_seen > ns + err)
			w->backwards++;
		/* and an older stamp of ours, converted again later */
		size_t j = rand_r(&w->seed) % 64;
		if (j <= (size_t)i && fts_convert(&old[j], &ns, &err) == 0 &&
		    (ns + err < old_t0[j] || ns - err > old_t1[j]))
			w->bad++;
		w->done++;
	}
	return NULL;
}

static void *refresher(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		fts__clock_sample();
		struct timespec d = { 0, 200000 };
		nanosleep(&d, NULL);
	}
	return NULL;
}

static void convert_while_refreshing(void **state)
{
	pthread_t t[THREADS], r;
	struct worker w[THREADS] = { { 0 } };
	(void)state;

	assert_int_equal(fts_clock_start(), 0);
	assert_int_equal(pthread_create(&r, NULL, refresher, NULL), 0);
	for (int i = 0; i < THREADS; i++) {
		w[i].seed = (unsigned)i + 1;
		assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(r, NULL);
	for (int i = 0; i < THREADS; i++) {
		print_message("thread %d: %zu conversions, %zu outside bound, %zu backwards\n", i,
			      w[i].done, w[i].bad, w[i].backwards);
		assert_int_equal(w[i].done, ROUNDS);
		assert_int_equal(w[i].bad, 0);
		assert_int_equal(w[i].backwards, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(convert_while_refreshing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
