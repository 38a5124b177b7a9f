/* warp.c - is the counter one clock on every CPU? The warp test, for a counter that
 * the kernel does not keep time with itself (proof.c runs it at the first
 * calibration, `faststamp serve` once for the machine).
 *
 * Two threads, one pinned to the first CPU of the set and one to another, take turns
 * through one cache line: each waits for the other's reading, reads the counter, and
 * hands its own over. A reading taken after seeing another is later in time, so
 * mine - theirs >= offset(mine) - offset(theirs) + the hand-over's latency: the least
 * difference seen in each direction bounds the two CPUs' offset from both sides, and
 * a negative one is a warp: the counter went backwards across CPUs by that much.
 * The second thread moves to each other CPU in turn, so the cost is linear in the
 * number of CPUs: a pair takes HOPS hand-overs, or PAIR_NS, whichever ends first.
 * This is the kernel's own TSC synchronisation check (arch/x86/kernel/tsc_sync.c),
 * measured in both directions and kept as figures rather than a verdict.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "warp.h"
#include "now.h"

#define HOPS 128             /* hand-overs a pair (each way: 64); the least difference
			      * settles within a few dozen on the VMs measured */
/* A pair stops after 50 ms even with fewer, if it has MIN_HOPS: its threads run
 * together only while neither CPU is taken by another program (on a loaded machine, a
 * few ms at a time); without them it goes on to 1 s. */
#define PAIR_NS 50000000
#define PAIR_MAX_NS 1000000000
#define MIN_HOPS 16          /* fewer than this in a pair: no verdict (-EAGAIN) */

struct baton {
	uint64_t turn;       /* even: the first CPU's turn; odd: the other's */
	uint64_t value;      /* the counter, as the last one read it */
	int stop;            /* the pair ran out of time */
} __attribute__((aligned(64)));   /* alone in its line: nothing else moves it */

struct runner {
	struct baton *b;
	uint64_t (*read)(void *);
	void *ctx;
	int cpu, parity;
	int64_t least;       /* least (mine - theirs) seen, ticks */
	unsigned seen;
};

static int64_t mono_ns(void)
{
	int64_t ns = 0;
	fts__now(CLOCK_MONOTONIC, &ns);
	return ns;
}

static void *run(void *arg)
{
	struct runner *r = arg;
	struct baton *b = r->b;
	int64_t start = mono_ns();

	/* its short sleeps are short, whatever slack the program gave its own threads */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	r->least = INT64_MAX;
	for (uint64_t k = (uint64_t)r->parity; k < HOPS; k += 2) {
		unsigned spins = 0;
		int64_t since = 0;
		while (__atomic_load_n(&b->turn, __ATOMIC_ACQUIRE) != k) {
			int64_t now;
			if (__atomic_load_n(&b->stop, __ATOMIC_RELAXED))
				return NULL;
			if (++spins % 1024)
				continue;
			now = mono_ns();
			if (now - start > PAIR_MAX_NS || (now - start > PAIR_NS && k >= MIN_HOPS)) {
				__atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
				return NULL;
			}
			/* A partner that does not come for 200 us: its CPU is taken by another
			 * program. A short sleep gives this CPU away too, and a thread woken
			 * from one runs at once: the two meet again where the other program's
			 * time slices would keep them apart. (Sooner, it would only put an
			 * idle vCPU to sleep, which is slow to wake.) */
			if (!since)
				since = now;
			else if (now - since > 200000)
				nanosleep(&(struct timespec){ 0, 20000 }, NULL);
		}
		/* the read is ordered after the load that saw the turn (read() fences) */
		uint64_t theirs = __atomic_load_n(&b->value, __ATOMIC_RELAXED), mine = r->read(r->ctx);
		if (k > 0) {
			int64_t d = (int64_t)(mine - theirs);
			if (d < r->least)
				r->least = d;
			r->seen++;
		}
		__atomic_store_n(&b->value, mine, __ATOMIC_RELAXED);
		__atomic_store_n(&b->turn, k + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Both threads are made on their CPUs (no migration to wait for) with every signal
 * blocked: the program's signals never run on them. 0, or a positive errno from
 * pthread_create (EINVAL: a CPU this process may not run on). */
static int pair(struct runner r[2])
{
	pthread_attr_t attr[2];
	sigset_t all, old;
	pthread_t t[2];
	int rc = 0, made = 0;

	for (int i = 0; i < 2; i++) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(r[i].cpu, &one);
		pthread_attr_init(&attr[i]);
		pthread_attr_setaffinity_np(&attr[i], sizeof(one), &one);
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (; made < 2 && !(rc = pthread_create(&t[made], &attr[made], run, &r[made])); made++)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (int i = 0; i < 2; i++)
		pthread_attr_destroy(&attr[i]);
	if (made < 2)   /* the one that runs stops at its deadline */
		__atomic_store_n(&r->b->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	return rc;
}

int fts__warp_measure(uint64_t (*read)(void *), void *ctx, const cpu_set_t *cpus,
		      struct fts__warp *w)
{
	int first = -1;
	int64_t start = mono_ns();

	*w = (struct fts__warp){ .worst_cpu = -1 };
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct baton b = { 0 };
		struct runner r[2];
		int rc;

		if (!CPU_ISSET(cpu, cpus))
			continue;
		w->cpus++;
		if (first < 0) {
			first = cpu;
			continue;
		}
		r[0] = (struct runner){ .b = &b, .read = read, .ctx = ctx, .cpu = first, .parity = 0 };
		r[1] = (struct runner){ .b = &b, .read = read, .ctx = ctx, .cpu = cpu, .parity = 1 };
		if ((rc = pair(r)) == EINVAL) {   /* not ours to run on (a cpuset): left out */
			w->cpus--;
			continue;
		}
		if (rc != 0)
			return -rc;
		if (r[0].seen < MIN_HOPS / 2 || r[1].seen < MIN_HOPS / 2)
			return -EAGAIN;
		w->pairs++;
		/* the offsets cancel: what is left is the latency there and back */
		if ((uint64_t)(r[0].least + r[1].least) > w->rtt)
			w->rtt = (uint64_t)(r[0].least + r[1].least);
		/* r[1].least >= offset(cpu) - offset(first) >= -r[0].least */
		for (int i = 0; i < 2; i++) {
			uint64_t back = r[i].least < 0 ? (uint64_t)-r[i].least : 0;
			uint64_t far = r[i].least < 0 ? back : (uint64_t)r[i].least;
			if (back > w->warp) {
				w->warp = back;
				w->worst_cpu = cpu;
			}
			if (far > w->spread)
				w->spread = far;
		}
	}
	w->cost_ns = mono_ns() - start;
	return 0;
}

void fts__warp_cpus_allowed(cpu_set_t *set)
{
	cpu_set_t mine;

	CPU_ZERO(set);
	if (sched_getaffinity(getpid(), sizeof(*set), set) != 0)
		CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof(mine), &mine) == 0)
		CPU_OR(set, set, &mine);
}
