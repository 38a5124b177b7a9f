/* faststamp bench - every way to tell the time on this machine, side by side.
 *
 * Costs are measured in interleaved rounds (A B C ... A B C ...), so a noisy neighbour
 * or a frequency change hurts every operation alike; each round gives one ns-per-call
 * figure per operation and the table shows the median and p10..p90 over rounds.
 * Each operation is a separate noinline loop, so a profiler can count it alone
 * (--run-op, used by scripts/callgrind-store.sh).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#  include <cpuid.h>
#endif

#include "faststamp.h"
#include "bench.h"
#include "tool.h"

static const char usage[] =
	"usage: faststamp bench [--quick] [--json] [--plot DIR] [--rounds N]\n"
	"  Measure, interleaved in one run, the cost per call of store_fast_timestamp,\n"
	"  fts_store_relaxed, the bare counter reads, clock_gettime (REALTIME, MONOTONIC,\n"
	"  MONOTONIC_RAW, REALTIME_COARSE, TAI), gettimeofday, time and the conversions;\n"
	"  the first conversion in a fresh process; stores from 2 threads on 2 CPUs against\n"
	"  1; the accuracy of immediate and late conversions against a clock_gettime\n"
	"  bracket. Prints a table (median, p10, p90 over rounds, ratio to\n"
	"  clock_gettime(CLOCK_REALTIME)).\n"
	"  --quick        a few seconds: fewer rounds, shorter warm-up\n"
	"  --json         one JSON object on stdout instead of the table\n"
	"  --plot DIR     write DIR/cost.png and DIR/accuracy.png with gnuplot\n"
	"  --rounds N     rounds of the interleaved cost loop (default 101, quick 15)\n"
	"  --run-op OP N  run one operation's loop N times, untimed (for profilers);\n"
	"                 OP is a JSON key without _ns, e.g. store, clock_gettime\n";

#define NREC 4096   /* recent stamps, cycled through by the conversion loops */
#define BATCH 256   /* stamps per fts_convert_array call */
#define HIST_N 64   /* bins per histogram in the accuracy chart */

static volatile int64_t sink;

static struct {
	fast_timestamp_t recent[NREC];  /* stored in a burst, just before a round */
	fast_timestamp_t oldrand[NREC]; /* warm-up stamps in random order */
	fast_timestamp_t *old;          /* warm-up stamps in order */
	size_t nold;
	uint32_t idx[NREC];             /* random indices into old */
	int64_t ns[BATCH], err[BATCH];
} B;

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- the operations --------------------------------------------------------------- */

#define OP(name) static __attribute__((noinline)) void name(size_t n)

OP(op_store)
{
	for (size_t i = 0; i < n; i++) {
		fast_timestamp_t s;
		store_fast_timestamp(&s);
		sink = (int64_t)s;
	}
}

OP(op_store_relaxed)
{
	for (size_t i = 0; i < n; i++) {
		fast_timestamp_t s;
		fts_store_relaxed(&s);
		sink = (int64_t)s;
	}
}

#if defined(__x86_64__)
OP(op_rdtsc)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		sink = (int64_t)(((uint64_t)hi << 32) | lo);
	}
}

OP(op_rdtscp)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t lo, hi, aux;
		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
		sink = (int64_t)(((uint64_t)hi << 32) | lo);
	}
}

OP(op_lfence_rdtsc)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t lo, hi;
		/* The ordered read store_fast_timestamp uses, written out by hand here to
		 * show what the library adds around it (nothing, it should turn out). */
		__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
		sink = (int64_t)(((uint64_t)hi << 32) | lo);
	}
}

static int have_rdtscp(void)
{
	unsigned a, b, c, d;
	/* CPUID 0x80000001 EDX bit 27: RDTSCP; without it the instruction traps. */
	return __get_cpuid(0x80000001, &a, &b, &c, &d) && (d & (1u << 27));
}
#elif defined(__aarch64__)
OP(op_cntvct)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
		sink = (int64_t)v;
	}
}

OP(op_isb_cntvct)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		/* isb: the read cannot be speculated ahead of earlier instructions. */
		__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
		sink = (int64_t)v;
	}
}
#elif defined(__riscv) && __riscv_xlen == 64
OP(op_rdtime)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		__asm__ __volatile__("rdtime %0" : "=r"(v));
		sink = (int64_t)v;
	}
}
#endif

static void clock_loop(clockid_t id, size_t n)
{
	struct timespec ts;
	for (size_t i = 0; i < n; i++) {
		clock_gettime(id, &ts);
		sink = ts.tv_nsec;
	}
}

OP(op_cgt_realtime) { clock_loop(CLOCK_REALTIME, n); }
OP(op_cgt_monotonic) { clock_loop(CLOCK_MONOTONIC, n); }
OP(op_cgt_monotonic_raw) { clock_loop(CLOCK_MONOTONIC_RAW, n); }
OP(op_cgt_realtime_coarse) { clock_loop(CLOCK_REALTIME_COARSE, n); }
OP(op_cgt_tai) { clock_loop(CLOCK_TAI, n); }

OP(op_gettimeofday)
{
	struct timeval tv;
	for (size_t i = 0; i < n; i++) {
		gettimeofday(&tv, NULL);
		sink = tv.tv_usec;
	}
}

OP(op_time)
{
	for (size_t i = 0; i < n; i++)
		sink = time(NULL);
}

/* A burst of recent stamps, then one conversion of a stamp just after them: the library
 * extrapolates up to 2 ms past its newest sample, so the burst lies there, as the stamps
 * of a program converting at once would. */
static void prep_recent(void)
{
	int64_t ns;
	for (size_t i = 0; i < NREC; i++)
		store_fast_timestamp(&B.recent[i]);
	fts_convert(&B.recent[NREC - 1], &ns, NULL);
}

/* A burst, then a conversion more than 2 ms later, which takes a sample: the burst lies
 * inside the history, between two samples, as stamps converted a little later do. */
static void prep_inside(void)
{
	struct timespec gap = { 0, 2500000 };  /* past the library's 2 ms extrapolation */
	fast_timestamp_t s;
	int64_t ns;

	for (size_t i = 0; i < NREC; i++)
		store_fast_timestamp(&B.recent[i]);
	while (nanosleep(&gap, &gap) < 0 && errno == EINTR)
		;
	store_fast_timestamp(&s);
	fts_convert(&s, &ns, NULL);
}

/* The time alone, as fast_timestamp_to_timespec asks for it. */
OP(op_convert)
{
	int64_t ns;
	for (size_t i = 0; i < n; i++) {
		fts_convert(&B.recent[i & (NREC - 1)], &ns, NULL);
		sink = ns;
	}
}

/* The time and its error bound. */
OP(op_convert_bound)
{
	int64_t ns, err;
	for (size_t i = 0; i < n; i++) {
		fts_convert(&B.recent[i & (NREC - 1)], &ns, &err);
		sink = ns + err;
	}
}

OP(op_convert_old)
{
	int64_t ns;
	for (size_t i = 0; i < n; i++) {
		fts_convert(&B.old[B.idx[i & (NREC - 1)]], &ns, NULL);
		sink = ns;
	}
}

/* Store and convert at once: the stamp is past the newest sample, extrapolated; about
 * every 2 ms one call takes a sample. */
OP(op_store_convert)
{
	int64_t ns, err;
	for (size_t i = 0; i < n; i++) {
		fast_timestamp_t s;
		store_fast_timestamp(&s);
		fts_convert(&s, &ns, &err);
		sink = ns + err;
	}
}

OP(op_convert_batch)
{
	for (size_t i = 0; i < n; i += BATCH) {
		fts_convert_array(&B.recent[i & (NREC - 1)], BATCH, B.ns, NULL);
		sink = B.ns[BATCH - 1];
	}
}

OP(op_convert_batch_bound)
{
	for (size_t i = 0; i < n; i += BATCH) {
		fts_convert_array(&B.recent[i & (NREC - 1)], BATCH, B.ns, B.err);
		sink = B.ns[BATCH - 1] + B.err[BATCH - 1];
	}
}

OP(op_convert_batch_old)
{
	for (size_t i = 0; i < n; i += BATCH) {
		fts_convert_array(&B.oldrand[i & (NREC - 1)], BATCH, B.ns, NULL);
		sink = B.ns[BATCH - 1];
	}
}

OP(op_diff)
{
	int64_t d;
	for (size_t i = 0; i < n; i++) {
		fts_diff_ns(&B.recent[i & (NREC - 1)], &B.recent[(i + 7) & (NREC - 1)], &d);
		sink = d;
	}
}

struct op {
	const char *key;    /* JSON field <key>_ns */
	const char *label;
	void (*run)(size_t n);
	void (*prep)(void); /* before every timed run, untimed */
	size_t unit;        /* the call count is a multiple of this */
	int avail;
	size_t calls;       /* per round */
	double *r;          /* ns per call, one per round */
	double p10, p50, p90;
};

static struct op ops[] = {
	{ "store", "store_fast_timestamp (ordered)", op_store, NULL, 1, 1, 0, 0, 0, 0, 0 },
	{ "store_relaxed", "fts_store_relaxed", op_store_relaxed, NULL, 1, 1, 0, 0, 0, 0, 0 },
#if defined(__x86_64__)
	{ "rdtsc", "rdtsc (bare)", op_rdtsc, NULL, 1, 1, 0, 0, 0, 0, 0 },
	{ "rdtscp", "rdtscp", op_rdtscp, NULL, 1, 0, 0, 0, 0, 0, 0 },
	{ "lfence_rdtsc", "lfence; rdtsc", op_lfence_rdtsc, NULL, 1, 1, 0, 0, 0, 0, 0 },
#elif defined(__aarch64__)
	{ "cntvct", "mrs cntvct_el0 (bare)", op_cntvct, NULL, 1, 1, 0, 0, 0, 0, 0 },
	{ "isb_cntvct", "isb; mrs cntvct_el0", op_isb_cntvct, NULL, 1, 1, 0, 0, 0, 0, 0 },
#elif defined(__riscv) && __riscv_xlen == 64
	{ "rdtime", "rdtime (bare)", op_rdtime, NULL, 1, 1, 0, 0, 0, 0, 0 },
#endif
	{ "clock_gettime", "clock_gettime(REALTIME)", op_cgt_realtime, NULL, 1, 1, 0, 0, 0, 0, 0 },
	{ "clock_gettime_monotonic", "clock_gettime(MONOTONIC)", op_cgt_monotonic, NULL, 1, 1, 0, 0, 0, 0, 0 },
	{ "clock_gettime_monotonic_raw", "clock_gettime(MONOTONIC_RAW)", op_cgt_monotonic_raw, NULL, 1, 1, 0, 0, 0, 0, 0 },
	{ "clock_gettime_realtime_coarse", "clock_gettime(REALTIME_COARSE)", op_cgt_realtime_coarse, NULL, 1, 1, 0, 0, 0, 0, 0 },
	{ "clock_gettime_tai", "clock_gettime(TAI)", op_cgt_tai, NULL, 1, 1, 0, 0, 0, 0, 0 },
	{ "gettimeofday", "gettimeofday", op_gettimeofday, NULL, 1, 1, 0, 0, 0, 0, 0 },
	{ "time", "time", op_time, NULL, 1, 1, 0, 0, 0, 0, 0 },
	{ "convert", "fts_convert, inside history", op_convert, prep_inside, 1, 1, 0, 0, 0, 0, 0 },
	{ "convert_bound", "fts_convert + bound, inside history", op_convert_bound, prep_inside, 1, 1, 0, 0, 0, 0, 0 },
	{ "convert_recent", "fts_convert, past newest sample", op_convert, prep_recent, 1, 1, 0, 0, 0, 0, 0 },
	{ "convert_old", "fts_convert, old stamp (random)", op_convert_old, NULL, 1, 1, 0, 0, 0, 0, 0 },
	{ "convert_batch", "fts_convert_array/stamp, inside history", op_convert_batch, prep_inside, BATCH, 1, 0, 0, 0, 0, 0 },
	{ "convert_batch_bound", "fts_convert_array/stamp + bounds, inside", op_convert_batch_bound, prep_inside, BATCH, 1, 0, 0, 0, 0, 0 },
	{ "convert_batch_recent", "fts_convert_array/stamp, past newest", op_convert_batch, prep_recent, BATCH, 1, 0, 0, 0, 0, 0 },
	{ "convert_batch_old", "fts_convert_array/stamp, old random", op_convert_batch_old, NULL, BATCH, 1, 0, 0, 0, 0, 0 },
	{ "diff", "fts_diff_ns", op_diff, prep_recent, 1, 1, 0, 0, 0, 0, 0 },
	{ "store_convert", "store + fts_convert at once", op_store_convert, NULL, 1, 1, 0, 0, 0, 0, 0 },
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

static struct op *find_op(const char *key)
{
	for (size_t i = 0; i < NOPS; i++)
		if (!strcmp(ops[i].key, key))
			return &ops[i];
	return NULL;
}

static double time_op(const struct op *o, size_t n)
{
	int64_t t0;
	if (o->prep)
		o->prep();
	t0 = fts_tool_now(CLOCK_MONOTONIC);
	o->run(n);
	return (double)(fts_tool_now(CLOCK_MONOTONIC) - t0) / (double)n;
}

/* Calls per round so that one timed run lasts about target_ns (at least one unit). */
static size_t calibrate_calls(const struct op *o, double target_ns)
{
	size_t n = o->unit;
	double per;

	for (;;) {
		per = time_op(o, n);
		if (per * (double)n >= target_ns / 8 || n >= ((size_t)1 << 24))
			break;
		n *= 4;
	}
	if (per <= 0)
		per = 0.1;
	n = (size_t)(target_ns / per);
	n = n / o->unit * o->unit;
	if (n < o->unit)
		n = o->unit;
	if (n > ((size_t)1 << 24))
		n = (size_t)1 << 24;
	return n;
}

/* ---- first conversion in a fresh process ------------------------------------------ */

static int first_conversion_child(void)
{
	fast_timestamp_t s;
	int64_t ns, t0, t1;

	store_fast_timestamp(&s);
	t0 = fts_tool_now(CLOCK_MONOTONIC);
	if (fts_convert(&s, &ns, NULL) < 0) {
		perror("faststamp bench: first conversion");
		return 1;
	}
	t1 = fts_tool_now(CLOCK_MONOTONIC);
	printf("%lld\n", (long long)(t1 - t0));
	return 0;
}

/* Run this program again as a child that times its own first conversion; -1 on
 * failure (with a message), else the child's ns. */
static int64_t first_conversion(void)
{
	int fd[2], status;
	char buf[64];
	ssize_t got, len = 0;
	pid_t pid;

	if (pipe(fd) < 0) {
		perror("faststamp bench: pipe");
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("faststamp bench: fork");
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		if (dup2(fd[1], 1) < 0)
			_exit(127);
		close(fd[1]);
		execl("/proc/self/exe", "faststamp", "bench", "--first-conversion-child", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while (len < (ssize_t)sizeof(buf) - 1 &&
	       ((got = read(fd[0], buf + len, sizeof(buf) - 1 - (size_t)len)) > 0 ||
		(got < 0 && errno == EINTR)))
		if (got > 0)
			len += got;
	close(fd[0]);
	buf[len] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "faststamp bench: the first-conversion child was killed by signal %d\n",
			WTERMSIG(status));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || len == 0) {
		fprintf(stderr, "faststamp bench: the first-conversion child failed (exit %d)\n",
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return strtoll(buf, NULL, 10);
}

/* ---- two threads on two CPUs against one ------------------------------------------ */

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
		d->ns = time_op(d->op, d->n);
		pthread_barrier_wait(&d->done);
	}
	return NULL;
}

struct scale {
	const char *key, *label;
	double p10, p50, p90;
};

static struct scale scales[] = {
	{ "store", "store_fast_timestamp", 0, 0, 0 },
	{ "store_relaxed", "fts_store_relaxed", 0, 0, 0 },
#if defined(__x86_64__)
	/* The bare reads are the control: if they slow down too, it is the CPUs. */
	{ "rdtsc", "rdtsc (bare)", 0, 0, 0 },
	{ "lfence_rdtsc", "lfence; rdtsc", 0, 0, 0 },
#elif defined(__aarch64__)
	{ "cntvct", "mrs cntvct_el0 (bare)", 0, 0, 0 },
	{ "isb_cntvct", "isb; mrs cntvct_el0", 0, 0, 0 },
#elif defined(__riscv) && __riscv_xlen == 64
	{ "rdtime", "rdtime (bare)", 0, 0, 0 },
#endif
	{ "clock_gettime", "clock_gettime(REALTIME)", 0, 0, 0 },
	{ "convert", "fts_convert, inside history", 0, 0, 0 },
};
#define NSCALES (sizeof(scales) / sizeof(scales[0]))

/* Two CPUs this process may use, or -1. */
static int two_cpus(int *a, int *b)
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

/* Per round and operation: 1 thread alone, then 2 at once; ratio of ns per call.
 * Returns 0, or -1 with a reason in why. */
static int scaling(int rounds, char *why, size_t len)
{
	cpu_set_t saved;
	struct duo d;
	pthread_t t;
	int a = -1, b = -1, err;
	double *r = calloc((size_t)rounds, sizeof(*r) * NSCALES);

	if (!r) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	if (two_cpus(&a, &b) < 0) {
		snprintf(why, len, "only one CPU available");
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
		free(r);
		return -1;
	}
	prep_inside();
	for (int k = 0; k < rounds; k++) {
		for (size_t s = 0; s < NSCALES; s++) {
			const struct op *o = find_op(scales[s].key);
			/* prep (a burst of stores and a conversion) must not run concurrently
			 * with the other thread's reads of the same stamps; ops here have none
			 * except convert, whose stamps were prepared above. */
			struct op plain = *o;
			double one, two;
			plain.prep = NULL;
			one = time_op(&plain, o->calls);
			d.op = &plain;
			d.n = o->calls;
			pthread_barrier_wait(&d.go);
			two = time_op(&plain, o->calls);
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
	for (size_t s = 0; s < NSCALES; s++) {
		double *v = r + s * (size_t)rounds;
		scales[s].p10 = fts_tool_quantile_d(v, (size_t)rounds, 0.1);
		scales[s].p50 = fts_tool_quantile_d(v, (size_t)rounds, 0.5);
		scales[s].p90 = fts_tool_quantile_d(v, (size_t)rounds, 0.9);
	}
	snprintf(why, len, "CPUs %d and %d", a, b);
	free(r);
	return 0;
}

/* ---- accuracy --------------------------------------------------------------------- */

struct bracket {
	int64_t t0, t1;
	fast_timestamp_t s;
};

static void take(struct bracket *b)
{
	b->t0 = fts_tool_now(CLOCK_REALTIME);
	store_fast_timestamp(&b->s);
	b->t1 = fts_tool_now(CLOCK_REALTIME);
}

struct acc {
	const char *name;
	size_t n, inside, covered;
	double *off, *width, *bound;  /* n each; each sorted by acc_summary */
	double off_p[5], width_p[3], bound_p[2], worst;
};

static int acc_alloc(struct acc *a, const char *name, size_t n)
{
	a->name = name;
	a->off = calloc(n, sizeof(double));
	a->width = calloc(n, sizeof(double));
	a->bound = calloc(n, sizeof(double));
	return a->off && a->width && a->bound ? 0 : -1;
}

static void acc_free(struct acc *a)
{
	free(a->off);
	free(a->width);
	free(a->bound);
}

static int acc_add(struct acc *a, const struct bracket *b)
{
	int64_t ns, err, mid = b->t0 + (b->t1 - b->t0) / 2;

	if (fts_convert(&b->s, &ns, &err) < 0)
		return -1;
	a->off[a->n] = (double)(ns - mid);
	a->width[a->n] = (double)(b->t1 - b->t0);
	a->bound[a->n] = (double)err;
	a->inside += ns >= b->t0 && ns <= b->t1;
	a->covered += ns - err <= b->t1 && ns + err >= b->t0;
	a->n++;
	return 0;
}

static void acc_summary(struct acc *a)
{
	static const double q5[5] = { 0.01, 0.1, 0.5, 0.9, 0.99 };

	a->worst = 0;
	for (size_t i = 0; i < a->n; i++)
		if (fabs(a->off[i]) > a->worst)
			a->worst = fabs(a->off[i]);
	/* Quantiles sort in place, so off[i] and width[i] stop matching: the histograms
	 * need only each distribution. */
	a->width_p[0] = fts_tool_quantile_d(a->width, a->n, 0.5);
	a->width_p[1] = fts_tool_quantile_d(a->width, a->n, 0.9);
	a->width_p[2] = fts_tool_quantile_d(a->width, a->n, 0.99);
	for (int i = 0; i < 5; i++)
		a->off_p[i] = fts_tool_quantile_d(a->off, a->n, q5[i]);
	a->bound_p[0] = fts_tool_quantile_d(a->bound, a->n, 0.5);
	a->bound_p[1] = fts_tool_quantile_d(a->bound, a->n, 0.99);
}

/* ---- output ----------------------------------------------------------------------- */

static void json_num(const char *key, double v, int *first)
{
	printf("%s\n  \"%s\": ", *first ? "" : ",", key);
	*first = 0;
	if (isfinite(v) && v == floor(v) && fabs(v) < 1e15)
		printf("%.0f", v);
	else if (isfinite(v))
		printf("%.3f", v);
	else
		printf("null");
}

static void json_str(const char *key, const char *v, int *first)
{
	printf("%s\n  \"%s\": \"", *first ? "" : ",", key);
	*first = 0;
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			printf("\\%c", *v);
		else if ((unsigned char)*v < 0x20)
			printf("\\u%04x", *v);
		else
			putchar(*v);
	}
	putchar('"');
}

static void json_acc(const struct acc *a, int *first)
{
	char k[96];
	const char *n = a->name;
#define ACC(suffix, v) (snprintf(k, sizeof(k), "accuracy_%s_%s", n, suffix), json_num(k, v, first))
	ACC("stamps", (double)a->n);
	ACC("offset_p1_ns", a->off_p[0]);
	ACC("offset_p10_ns", a->off_p[1]);
	ACC("offset_median_ns", a->off_p[2]);
	ACC("offset_p90_ns", a->off_p[3]);
	ACC("offset_p99_ns", a->off_p[4]);
	ACC("offset_worst_ns", a->worst);
	ACC("width_median_ns", a->width_p[0]);
	ACC("width_p90_ns", a->width_p[1]);
	ACC("width_p99_ns", a->width_p[2]);
	ACC("bound_median_ns", a->bound_p[0]);
	ACC("bound_p99_ns", a->bound_p[1]);
	ACC("inside_pct", a->n ? 100.0 * (double)a->inside / (double)a->n : NAN);
	ACC("bound_covers_pct", a->n ? 100.0 * (double)a->covered / (double)a->n : NAN);
#undef ACC
}

static void print_acc(const struct acc *a)
{
	double n = a->n ? (double)a->n : 1;
	printf("  %-9s %7zu %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f   %6.0f %6.0f  %6.0f  %7.3f%% %7.3f%%\n",
	       a->name, a->n, a->off_p[0], a->off_p[1], a->off_p[2], a->off_p[3], a->off_p[4],
	       a->worst, a->width_p[0], a->width_p[2], a->bound_p[0],
	       100.0 * (double)a->inside / n, 100.0 * (double)a->covered / n);
}

/* ---- main ------------------------------------------------------------------------- */

struct opts {
	int quick, json, rounds;
	const char *plot;
};

static int run_op(const char *key, const char *count)
{
	struct op *o = find_op(key);
	uint64_t n;

	if (!o || !o->avail)
		return fts_tool_usage_error("bench", usage, "unknown operation '%s'", key);
	if (fts_tool_parse_u64(count, 1, UINT64_C(1) << 32, &n) < 0)
		return fts_tool_usage_error("bench", usage, "bad count '%s' (1..2^32)", count);
	/* Calibrated first, as in the timed run: else the first conversion's samples come
	 * after the prepared stamps and every one of them is extrapolated backwards. */
	if (fts_clock_start() < 0) {
		perror("faststamp bench: calibration");
		return 1;
	}
	if (o->prep)
		o->prep();
	o->run((size_t)((n + o->unit - 1) / o->unit * o->unit));
	return 0;
}

/* Stamps stored over the warm-up, bracketed: the old stamps for the conversion loops
 * and the late-conversion accuracy round. */
static int warm_up(struct bracket *w, size_t n, int64_t span_ns)
{
	int64_t start = fts_tool_now(CLOCK_MONOTONIC);

	if (fts_clock_start() < 0) {
		perror("faststamp bench: calibration");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t due = start + span_ns * (int64_t)i / (int64_t)n;
		struct timespec ts = { due / 1000000000, due % 1000000000 };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		take(&w[i]);
	}
	return 0;
}

int fts_tool_bench(int argc, char **argv)
{
	struct opts o = { 0, 0, 0, NULL };
	struct fts_info in = { .size = sizeof(in) };
	struct acc now = { 0 }, late = { 0 };
	struct bracket *w = NULL;
	const struct op *cg;
	size_t nwarm, nacc;
	int64_t first[9];
	int nfirst, firsts = 0, scaled, rc = 1;
	double target_ns, first_p[3] = { NAN, NAN, NAN };
	char scale_why[96];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--first-conversion-child") && argc == 2) {
			return first_conversion_child();
		} else if (!strcmp(argv[i], "--quick")) {
			o.quick = 1;
		} else if (!strcmp(argv[i], "--json")) {
			o.json = 1;
		} else if (!strcmp(argv[i], "--plot") && i + 1 < argc && argv[i + 1][0]) {
			o.plot = argv[++i];
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			uint64_t v;
			if (fts_tool_parse_u64(argv[++i], 3, 100000, &v) < 0)
				return fts_tool_usage_error("bench", usage, "bad --rounds '%s' (3..100000)", argv[i]);
			o.rounds = (int)v;
		} else if (!strcmp(argv[i], "--run-op") && i + 2 < argc) {
#if defined(__x86_64__)
			find_op("rdtscp")->avail = have_rdtscp();
#endif
			return run_op(argv[i + 1], argv[i + 2]);
		} else {
			return fts_tool_usage_error("bench", usage, "unknown or incomplete option '%s'", argv[i]);
		}
	}
	if (!o.rounds)
		o.rounds = o.quick ? 15 : 101;
	/* Per timed run: long enough to dwarf the clock reads around it, short enough
	 * that rounds interleave many times within the run. */
	target_ns = o.quick ? 100e3 : 1e6;
	nwarm = o.quick ? 1024 : 4096;
	nacc = o.quick ? 2000 : 20000;
	nfirst = o.quick ? 3 : 9;

#if defined(__x86_64__)
	find_op("rdtscp")->avail = have_rdtscp();
#endif
	{
		struct timespec ts;
		find_op("clock_gettime_tai")->avail = clock_gettime(CLOCK_TAI, &ts) == 0;
	}

	/* Fresh processes first, while this one is still small. */
	for (int i = 0; i < nfirst; i++) {
		int64_t v = first_conversion();
		if (v > 0)
			first[firsts++] = v;
	}
	if (firsts) {
		first_p[0] = (double)fts_tool_quantile(first, (size_t)firsts, 0.0);
		first_p[1] = (double)fts_tool_quantile(first, (size_t)firsts, 0.5);
		first_p[2] = (double)fts_tool_quantile(first, (size_t)firsts, 1.0);
	}

	w = calloc(nwarm, sizeof(*w));
	B.old = calloc(nwarm, sizeof(*B.old));
	if (!w || !B.old || acc_alloc(&now, "immediate", nacc) < 0 ||
	    acc_alloc(&late, "late", nwarm) < 0) {
		perror("faststamp bench");
		goto out;
	}
	if (warm_up(w, nwarm, o.quick ? 300000000 : 2000000000) < 0)
		goto out;
	for (size_t i = 0; i < nwarm; i++)
		if (acc_add(&late, &w[i]) < 0) {
			perror("faststamp bench: conversion");
			goto out;
		}
	B.nold = nwarm;
	for (size_t i = 0; i < nwarm; i++)
		B.old[i] = w[i].s;
	for (size_t i = 0; i < NREC; i++) {
		B.idx[i] = (uint32_t)(xorshift() % nwarm);
		B.oldrand[i] = B.old[B.idx[i]];
	}
	for (size_t i = 0; i < nacc; i++) {
		struct bracket b;
		take(&b);
		if (acc_add(&now, &b) < 0) {
			perror("faststamp bench: conversion");
			goto out;
		}
	}
	fts_get_info(&in);

	for (size_t i = 0; i < NOPS; i++) {
		if (!ops[i].avail)
			continue;
		ops[i].calls = calibrate_calls(&ops[i], target_ns);
		ops[i].r = calloc((size_t)o.rounds, sizeof(double));
		if (!ops[i].r) {
			perror("faststamp bench");
			goto out;
		}
	}
	for (int k = 0; k < o.rounds; k++)
		for (size_t i = 0; i < NOPS; i++)
			if (ops[i].avail)
				ops[i].r[k] = time_op(&ops[i], ops[i].calls);
	for (size_t i = 0; i < NOPS; i++) {
		if (!ops[i].avail)
			continue;
		ops[i].p10 = fts_tool_quantile_d(ops[i].r, (size_t)o.rounds, 0.1);
		ops[i].p50 = fts_tool_quantile_d(ops[i].r, (size_t)o.rounds, 0.5);
		ops[i].p90 = fts_tool_quantile_d(ops[i].r, (size_t)o.rounds, 0.9);
	}
	scaled = scaling(o.quick ? 7 : 31, scale_why, sizeof(scale_why)) == 0;
	acc_summary(&now);
	acc_summary(&late);
	cg = find_op("clock_gettime");

	if (o.json) {
		int f = 1;
		printf("{");
		json_str("backend", in.backend, &f);
		json_str("counter", in.counter, &f);
		json_num("counter_hz", (double)in.counter_hz, &f);
		json_str("clocksource", in.clocksource, &f);
		json_num("rounds", o.rounds, &f);
		json_num("cpus", fts_tool_cpus(), &f);
		for (size_t i = 0; i < NOPS; i++) {
			char k[80];
			if (!ops[i].avail)
				continue;
			snprintf(k, sizeof(k), "%s_ns", ops[i].key);
			json_num(k, ops[i].p50, &f);
			snprintf(k, sizeof(k), "%s_p10_ns", ops[i].key);
			json_num(k, ops[i].p10, &f);
			snprintf(k, sizeof(k), "%s_p90_ns", ops[i].key);
			json_num(k, ops[i].p90, &f);
			snprintf(k, sizeof(k), "%s_ratio_clock_gettime", ops[i].key);
			json_num(k, ops[i].p50 / cg->p50, &f);
		}
		json_num("first_conversion_ns", first_p[1], &f);
		json_num("first_conversion_min_ns", first_p[0], &f);
		json_num("first_conversion_max_ns", first_p[2], &f);
		for (size_t s = 0; s < NSCALES; s++) {
			char k[80];
			snprintf(k, sizeof(k), "%s_2threads_ratio", scales[s].key);
			json_num(k, scaled ? scales[s].p50 : NAN, &f);
			snprintf(k, sizeof(k), "%s_2threads_ratio_p10", scales[s].key);
			json_num(k, scaled ? scales[s].p10 : NAN, &f);
			snprintf(k, sizeof(k), "%s_2threads_ratio_p90", scales[s].key);
			json_num(k, scaled ? scales[s].p90 : NAN, &f);
		}
		if (!scaled)
			json_str("scaling_skipped", scale_why, &f);
		json_acc(&now, &f);
		json_acc(&late, &f);
		printf("\n}\n");
	} else {
		printf("faststamp bench: backend %s", in.backend);
		if (in.counter_hz)
			printf(", counter %s at %.3f MHz", in.counter, (double)in.counter_hz / 1e6);
		printf(", clocksource %s, %d CPUs\n\n", in.clocksource[0] ? in.clocksource : "?",
		       fts_tool_cpus());
		printf("cost per call, ns: median and p10..p90 over %d interleaved rounds\n", o.rounds);
		printf("  %-42s %8s %8s %8s  %s\n", "operation", "median", "p10", "p90",
		       "x clock_gettime");
		for (size_t i = 0; i < NOPS; i++)
			if (ops[i].avail)
				printf("  %-42s %8.2f %8.2f %8.2f  %6.2f\n", ops[i].label, ops[i].p50,
				       ops[i].p10, ops[i].p90, ops[i].p50 / cg->p50);
		if (firsts)
			printf("  %-42s %8.0f %8.0f %8.0f  (min/max of %d fresh processes)\n",
			       "first fts_convert in a process", first_p[1], first_p[0], first_p[2],
			       firsts);
		printf("\n2 threads on 2 CPUs at once vs 1 alone: ns per call ratio (> 1: shared state)\n");
		if (scaled) {
			printf("  %s\n", scale_why);
			for (size_t s = 0; s < NSCALES; s++)
				printf("  %-42s %8.3f %8.3f %8.3f\n", scales[s].label, scales[s].p50,
				       scales[s].p10, scales[s].p90);
		} else {
			printf("  SKIP: %s\n", scale_why);
		}
		printf("\naccuracy: conversion minus the midpoint of its clock_gettime bracket, ns\n"
		       "  (immediate: converted at once; late: stored over the warm-up, converted after)\n");
		printf("  %-9s %7s %8s %8s %8s %8s %8s %8s   %6s %6s  %6s  %8s %8s\n", "round",
		       "stamps", "p1", "p10", "median", "p90", "p99", "worst", "width", "w p99",
		       "bound", "inside", "covered");
		print_acc(&now);
		print_acc(&late);
		printf("  (width: bracket width median and p99; bound: median err_ns; inside: conversion\n"
		       "   within the bracket; covered: [ns - err, ns + err] meets the bracket)\n");
	}

	rc = 0;
	if (o.plot) {
		struct fts_tool_bar bars[NOPS];
		size_t nb = 0;
		char title[160];
		int pr;
		for (size_t i = 0; i < NOPS; i++)
			if (ops[i].avail)
				bars[nb++] = (struct fts_tool_bar){ ops[i].label, ops[i].p10, ops[i].p50,
								    ops[i].p90 };
		snprintf(title, sizeof(title), "faststamp bench: backend %s, clocksource %s",
			 in.backend, in.clocksource[0] ? in.clocksource : "?");
		pr = fts_tool_bench_plot(o.plot, title, bars, nb, now.off, now.n, late.off, late.n,
					 now.width, late.width);
		if (pr < 0)
			rc = 1;
	}
out:
	for (size_t i = 0; i < NOPS; i++) {
		free(ops[i].r);
		ops[i].r = NULL;
	}
	acc_free(&now);
	acc_free(&late);
	free(B.old);
	B.old = NULL;
	free(w);
	return rc;
}
