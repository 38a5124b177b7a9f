/* scale.c - two threads on two CPUs at once against one alone: does an operation
 * share state between CPUs (a cache line both write, a lock)?
 *
 * Owns: the second thread, and the 2-thread ratios of the operations with a duo row
 * (struct op's duo_p*). May not: change an operation's own figures or print.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_int.h"
#include "tool.h"

struct duo {
	pthread_barrier_t go, done;
	const struct op *op;
	size_t n;
	double ns;
	int cpu, quit;
};

static void *duo_worker(void *arg)
{
	struct duo *d = arg;
	fts_tool_pin(d->cpu);
	for (;;) {
		pthread_barrier_wait(&d->go);
		if (d->quit)
			break;
		d->ns = bench_time_op(d->op, d->n);
		pthread_barrier_wait(&d->done);
	}
	return NULL;
}

/* Two CPUs this process may use, or -1. */
int bench_two_cpus(int *a, int *b)
{
	cpu_set_t set;
	int found = 0;
	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
		if (CPU_ISSET(c, &set))
			*(found++ ? b : a) = c;
	return found == 2 ? 0 : -1;
}

int bench_scaling(int rounds, char *why, size_t len)
{
	cpu_set_t saved;
	struct duo d;
	pthread_t t;
	int a = -1, b = -1, err;
	size_t ns = 0;
	struct op **sc = calloc(bench_nops, sizeof(*sc));
	double *r = calloc((size_t)rounds, sizeof(*r) * bench_nops);

	if (!r || !sc) {
		free(sc);
		free(r);
		snprintf(why, len, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < bench_nops; i++)
		if (bench_ops[i].duo && bench_ops[i].avail)
			sc[ns++] = &bench_ops[i];
	if (bench_two_cpus(&a, &b) < 0) {
		snprintf(why, len, "only one CPU available");
		free(sc);
		free(r);
		return -1;
	}
	sched_getaffinity(0, sizeof(saved), &saved);
	memset(&d, 0, sizeof(d));
	d.cpu = b;
	pthread_barrier_init(&d.go, NULL, 2);
	pthread_barrier_init(&d.done, NULL, 2);
	if (fts_tool_pin(a) < 0 || (err = pthread_create(&t, NULL, duo_worker, &d)) != 0) {
		snprintf(why, len, "cannot pin to CPU %d or start a thread", a);
		pthread_barrier_destroy(&d.go);
		pthread_barrier_destroy(&d.done);
		sched_setaffinity(0, sizeof(saved), &saved);
		free(sc);
		free(r);
		return -1;
	}
	bench_prep_inside();
	for (int k = 0; k < rounds; k++) {
		for (size_t s = 0; s < ns; s++) {
			const struct op *o = sc[s];
			/* prep (a burst of stores and a conversion) must not run concurrently
			 * with the other thread's reads of the same stamps; ops here have none
			 * except convert, whose stamps were prepared above, and the events,
			 * whose prep (a drain of every ring) runs while the other waits. */
			struct op plain = *o;
			double one, two;
			plain.prep = NULL;
			if (o->duo_prep)
				o->prep();
			one = bench_time_op(&plain, o->calls);
			d.op = &plain;
			d.n = o->calls;
			if (o->duo_prep)
				o->prep();
			pthread_barrier_wait(&d.go);
			two = bench_time_op(&plain, o->calls);
			pthread_barrier_wait(&d.done);
			r[s * (size_t)rounds + (size_t)k] = (two + d.ns) / 2 / one;
		}
	}
	d.quit = 1;
	pthread_barrier_wait(&d.go);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&d.go);
	pthread_barrier_destroy(&d.done);
	sched_setaffinity(0, sizeof(saved), &saved);
	for (size_t s = 0; s < ns; s++) {
		double *v = r + s * (size_t)rounds;
		sc[s]->duo_p10 = fts_tool_quantile_d(v, (size_t)rounds, 0.1);
		sc[s]->duo_p50 = fts_tool_quantile_d(v, (size_t)rounds, 0.5);
		sc[s]->duo_p90 = fts_tool_quantile_d(v, (size_t)rounds, 0.9);
	}
	snprintf(why, len, "CPUs %d and %d", a, b);
	free(sc);
	free(r);
	return 0;
}
