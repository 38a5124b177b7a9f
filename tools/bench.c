/* faststamp bench - every way to tell the time on this machine, side by side.
 *
 * Costs are measured in interleaved rounds (A B C ... A B C ...), so a noisy neighbour
 * or a frequency change hurts every operation alike; each round gives one ns-per-call
 * figure per operation and the table shows the median and p10..p90 over rounds.
 * Each operation is a separate noinline loop, so a profiler can count it alone
 * (--run-op, used by scripts/callgrind-store.sh).
 *
 * The calibration history (struct fts_calib) is measured on the simulated clock the
 * tests use (tests/daysim.h), a day of it: its memory from the resident set, its adds
 * over the whole day and one by one, its conversions in the same rounds as the rest,
 * and a reader's latency while a writer adds on another CPU.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#  include <cpuid.h>
#endif

#include "faststamp.h"
#include "bench.h"
#include "daysim.h"
#include "tool.h"

static const char usage[] =
	"usage: faststamp bench [--quick] [--json] [--plot DIR] [--rounds N]\n"
	"  Measure, interleaved in one run, the cost per call of store_fast_timestamp,\n"
	"  fts_store_relaxed, the bare counter reads, clock_gettime (REALTIME, MONOTONIC,\n"
	"  MONOTONIC_RAW, REALTIME_COARSE, TAI), gettimeofday, time and the conversions;\n"
	"  the first conversion in a fresh process; stores from 2 threads on 2 CPUs against\n"
	"  1; the accuracy of immediate and late conversions against a clock_gettime\n"
	"  bracket. Prints a table (median, p10, p90 over rounds, ratio to\n"
	"  clock_gettime(CLOCK_REALTIME)). Then a calibration history (struct fts_calib) fed\n"
	"  a simulated NTP-disciplined day at 10 samples a second: memory per knot kept,\n"
	"  fts_calib_add amortised and worst, fts_calib_convert of random and recent\n"
	"  counters, a reader's latency while a writer adds.\n"
	"  --quick        a few seconds: fewer rounds, shorter warm-up, an hour's history\n"
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

/* Latencies one by one: each ns its own bin below LAT_EXACT, above it 64 bins per power
 * of two (values to 1/64); the largest exactly. */
#define LAT_EXACT 1024
#define LAT_SUB 64
#define LAT_BINS (LAT_EXACT + (64 - 10) * LAT_SUB)

#define LAT_LONG 1000   /* ns: a call this long is counted apart */

struct lat {
	uint64_t bin[LAT_BINS];
	uint64_t n, nlong;
	int64_t max;
	double p50, p99, p999;
};

/* The calibration history on a simulated day (tests/daysim.h). */
static struct {
	struct daysim d;
	int built;
	int hours;
	size_t samples;
	struct fts_calib *c;       /* the day, kept for the conversion rounds */
	size_t knots;
	int64_t rss;               /* resident bytes the adds took, -1 if unknown */
	double rss_marginal;       /* per knot, over the second half of the adds */
	int thp_always;            /* transparent huge pages on every mapping */
	double add_ns, add_s;      /* amortised over the untimed adds; their total */
	struct lat add;            /* each add timed, on a second history */
	uint64_t *day;             /* counters uniform over the day, cycled through */
	size_t nday, cur;
	uint64_t last[NREC];       /* counters uniform over its last second */
	uint64_t *chase;           /* the control: a random cycle through as many bytes */
	size_t chase_at;
	int readers;               /* the reader test ran */
	char readers_why[96];
	/* Reader latencies, [0] a stamp in the newest interval, [1] a random one. */
	struct lat busy[2], alone[2], bracket;
	/* The reader's, while the writer adds and alone; the writer's over its adds. */
	struct rusage ru_busy, ru_alone, ru_writer;
	double busy_add_ns;        /* the writer's ns per add, the reader converting */
} H;

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

/* A history of its own: the counters of a simulated day, not this process's clock.
 * Random ones come from a pool larger than the caches, read on from where the last run
 * stopped: no run finds its look-ups cached by the one before. */
OP(op_calib_convert_day)
{
	int64_t ns, err;
	size_t k = H.cur;
	for (size_t i = 0; i < n; i++) {
		fts_calib_convert(H.c, H.day[(k + i) & (H.nday - 1)], &ns, &err);
		sink = ns + err;
	}
	H.cur = k + n;
}

OP(op_calib_convert_recent)
{
	int64_t ns, err;
	for (size_t i = 0; i < n; i++) {
		fts_calib_convert(H.c, H.last[i & (NREC - 1)], &ns, &err);
		sink = ns + err;
	}
}

/* The control: one dependent load at a random place in as many bytes as the history
 * holds (a pointer chase): what a look-up that misses the caches once costs here. */
OP(op_calib_control_load)
{
	uint64_t p = H.chase_at;
	for (size_t i = 0; i < n; i++)
		p = H.chase[p];
	H.chase_at = p;
	sink = (int64_t)p;
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
	/* Shown with the history figures; available once the day is built. */
	{ "calib_convert_day", "fts_calib_convert + bound, random stamp", op_calib_convert_day, NULL, 1, 0, 0, 0, 0, 0, 0 },
	{ "calib_convert_recent", "fts_calib_convert + bound, last second", op_calib_convert_recent, NULL, 1, 0, 0, 0, 0, 0, 0 },
	{ "calib_control_load", "control: random load in as many bytes", op_calib_control_load, NULL, 1, 0, 0, 0, 0, 0, 0 },
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

static struct op *find_op(const char *key)
{
	for (size_t i = 0; i < NOPS; i++)
		if (!strcmp(ops[i].key, key))
			return &ops[i];
	return NULL;
}

/* The operations on the simulated history, shown with its other figures. */
static int is_hist_op(const struct op *o)
{
	return !strncmp(o->key, "calib_", 6);
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

/* ---- the calibration history on a simulated day ---------------------------------- */

static void lat_add(struct lat *l, int64_t ns)
{
	uint64_t v = ns > 0 ? (uint64_t)ns : 0;
	unsigned b, e;

	if (v < LAT_EXACT) {
		b = (unsigned)v;
	} else {
		e = 63u - (unsigned)__builtin_clzll(v);   /* >= 10 */
		b = LAT_EXACT + (e - 10) * LAT_SUB + (unsigned)((v >> (e - 6)) & (LAT_SUB - 1));
	}
	l->bin[b]++;
	l->n++;
	l->nlong += v > LAT_LONG;
	if ((int64_t)v > l->max)
		l->max = (int64_t)v;
}

/* The q-quantile: the lower edge of its bin. */
static double lat_q(const struct lat *l, double q)
{
	uint64_t rank, seen = 0;

	if (!l->n)
		return NAN;
	rank = (uint64_t)(q * (double)(l->n - 1) + 0.5);
	for (unsigned b = 0; b < LAT_BINS; b++) {
		seen += l->bin[b];
		if (seen > rank) {
			unsigned e = (b - LAT_EXACT) / LAT_SUB + 10;
			return b < LAT_EXACT ? (double)b
					     : (double)((uint64_t)(LAT_SUB + (b - LAT_EXACT) % LAT_SUB) << (e - 6));
		}
	}
	return (double)l->max;
}

static void lat_summary(struct lat *l)
{
	l->p50 = lat_q(l, 0.5);
	l->p99 = lat_q(l, 0.99);
	l->p999 = lat_q(l, 0.999);
}

/* ns between two stamps, as fts_diff_ns measures it. */
static int64_t stamp_ns(const fast_timestamp_t *a, const fast_timestamp_t *b)
{
	int64_t d = 0;
	fts_diff_ns(a, b, &d);
	return d;
}

/* Resident bytes of this process, -1 if /proc says nothing. */
static int64_t rss_bytes(void)
{
	long size, rss;
	FILE *f = fopen("/proc/self/statm", "r");
	int got;

	if (!f)
		return -1;
	got = fscanf(f, "%ld %ld", &size, &rss);
	fclose(f);
	return got == 2 ? (int64_t)rss * sysconf(_SC_PAGESIZE) : -1;
}

/* Are anonymous mappings given huge pages unasked? Then resident bytes grow 2 MiB at a
 * time. */
static int thp_always(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[always]") != NULL;
}

static uint64_t in_span(uint64_t lo, uint64_t hi, uint32_t frac)
{
	return lo + (uint64_t)(((unsigned __int128)(hi - lo) * frac) >> 32);
}

/* One word per cache line of bytes, each holding the index of the next line of a
 * random cycle through them all. */
static int chase_build(size_t bytes)
{
	size_t lines = bytes / 64 > 64 ? bytes / 64 : 64, *perm = malloc(lines * sizeof(*perm));

	H.chase = malloc(lines * 64);
	if (!perm || !H.chase) {
		free(perm);
		return -1;
	}
	for (size_t i = 0; i < lines; i++)
		perm[i] = i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = (size_t)(xorshift() % (i + 1)), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		H.chase[perm[i] * 8] = perm[(i + 1) % lines] * 8;
	H.chase_at = perm[0] * 8;
	free(perm);
	return 0;
}

/* The simulated clock (10 samples a second, an hour with quick, else a day) and its
 * history with the default options, its adds untimed: what they cost in all, and the
 * memory they took. Then the stamps the conversion rounds cycle through. Returns 0, or
 * -1 with a message. */
static int hist_day(int quick)
{
	const struct daysim *d = &H.d;
	size_t n;
	int64_t rss0, rss_half = -1, rss1, t0, t1;
	size_t knots_half = 0;

	H.hours = quick ? 1 : 24;
	n = H.samples = (size_t)H.hours * 36000;   /* 10 a second */
	H.nday = quick ? (size_t)1 << 16 : (size_t)1 << 20;   /* 0.5 or 8 MiB of stamps */
	H.day = malloc(H.nday * sizeof(*H.day));
	H.built = 1;   /* daysim_free takes what a failed daysim_ntp left */
	if (!H.day || daysim_ntp(&H.d, n, 1) < 0) {
		perror("faststamp bench: the simulated day");
		return -1;
	}
	/* Nothing else allocates between the reads: the growth is the history's, its fixed
	 * part (the writer's state) included; the second half's growth is per knot alone. */
	rss0 = rss_bytes();
	H.c = fts_calib_new();
	if (!H.c) {
		perror("faststamp bench: fts_calib_new");
		return -1;
	}
	for (int half = 0; half < 2; half++) {
		size_t from = half ? n / 2 : 0, to = half ? n : n / 2;
		t0 = fts_tool_now(CLOCK_MONOTONIC);
		for (size_t i = from; i < to; i++)
			if (fts_calib_add(H.c, d->b[i], d->r[i], d->a[i]) < 0) {
				fprintf(stderr, "faststamp bench: fts_calib_add, sample %zu of the simulated day: %s\n",
					i, strerror(errno));
				return -1;
			}
		t1 = fts_tool_now(CLOCK_MONOTONIC);
		H.add_s += (double)(t1 - t0) / 1e9;
		if (!half) {
			rss_half = rss_bytes();
			knots_half = fts_calib_count(H.c);
		}
	}
	rss1 = rss_bytes();
	H.rss = rss0 >= 0 && rss1 >= 0 ? rss1 - rss0 : -1;
	H.thp_always = thp_always();
	H.knots = fts_calib_count(H.c);
	H.rss_marginal = rss_half >= 0 && rss1 >= 0 && H.knots > knots_half
		? (double)(rss1 - rss_half) / (double)(H.knots - knots_half) : NAN;
	H.add_ns = H.add_s * 1e9 / (double)n;

	for (size_t i = 0; i < H.nday; i++)
		H.day[i] = in_span(d->b[0], d->a[n - 1], (uint32_t)(xorshift() >> 32));
	for (size_t i = 0; i < NREC; i++)   /* the last 10 samples: one second */
		H.last[i] = in_span(d->b[n - 11], d->a[n - 1], (uint32_t)(xorshift() >> 32));
	if (chase_build(H.rss > 0 ? (size_t)H.rss : H.knots * 40) < 0) {
		perror("faststamp bench: the control's memory");
		return -1;
	}
	find_op("calib_convert_day")->avail = 1;
	find_op("calib_convert_recent")->avail = 1;
	find_op("calib_control_load")->avail = 1;
	return 0;
}

/* The same adds on a second history, each timed alone: the worst one. */
static int hist_adds(void)
{
	const struct daysim *d = &H.d;
	struct fts_calib *c = fts_calib_new();

	if (!c) {
		perror("faststamp bench: fts_calib_new");
		return -1;
	}
	for (size_t i = 0; i < d->nsamp; i++) {
		fast_timestamp_t t0, t1;
		int rc;
		store_fast_timestamp(&t0);
		rc = fts_calib_add(c, d->b[i], d->r[i], d->a[i]);
		store_fast_timestamp(&t1);
		if (rc < 0) {
			fprintf(stderr, "faststamp bench: fts_calib_add, sample %zu of the simulated day: %s\n",
				i, strerror(errno));
			fts_calib_free(c);
			return -1;
		}
		lat_add(&H.add, stamp_ns(&t0, &t1));
	}
	lat_summary(&H.add);
	fts_calib_free(c);
	return 0;
}

struct hwriter {
	struct fts_calib *c;
	const struct daysim *d;
	int cpu, err;
	size_t added;      /* samples in c: atomic, the reader's newest */
	int done;          /* atomic */
	struct rusage ru;  /* the writer thread's, over its adds */
	int64_t ns;        /* their time */
};

/* What the calling thread's rusage gained since *ru0 (page faults, context switches). */
static void ru_since(const struct rusage *ru0, struct rusage *d)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	d->ru_minflt = ru.ru_minflt - ru0->ru_minflt;
	d->ru_majflt = ru.ru_majflt - ru0->ru_majflt;
	d->ru_nvcsw = ru.ru_nvcsw - ru0->ru_nvcsw;
	d->ru_nivcsw = ru.ru_nivcsw - ru0->ru_nivcsw;
}

static void *hist_writer(void *arg)
{
	struct hwriter *w = arg;
	struct rusage ru0;
	int64_t t0;

	fts_tool_pin(w->cpu);
	getrusage(RUSAGE_THREAD, &ru0);
	t0 = fts_tool_now(CLOCK_MONOTONIC);
	for (size_t i = 0; i < w->d->nsamp; i++) {
		if (fts_calib_add(w->c, w->d->b[i], w->d->r[i], w->d->a[i]) < 0) {
			w->err = errno;
			break;
		}
		__atomic_store_n(&w->added, i + 1, __ATOMIC_RELEASE);
	}
	w->ns = fts_tool_now(CLOCK_MONOTONIC) - t0;
	ru_since(&ru0, &w->ru);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Reader samples start once the history has this many, so the newest interval has
 * neighbours on both sides. */
#define READ_FROM 12

/* Timed conversions, one by one, of a stamp in the newest interval (which every add
 * publishes again) and of a random one in all that was added, in turn: while the writer
 * runs (w->done unset), or n of them. The bracket is two ordered stores. Returns the
 * conversions, or 0 with a message when one failed. */
static uint64_t read_loop(struct hwriter *w, uint64_t n, struct lat l[2])
{
	const struct daysim *d = w->d;
	uint64_t i = 0;

	while (n ? i < n : !__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
		fast_timestamp_t t0, t1;
		size_t k = __atomic_load_n(&w->added, __ATOMIC_ACQUIRE);
		uint64_t x;
		int64_t ns, err;
		int rc;

		if (k < READ_FROM)
			continue;
		x = i & 1 ? in_span(d->b[0], d->a[k - 1], (uint32_t)(xorshift() >> 32)) : d->a[k - 2];
		store_fast_timestamp(&t0);
		rc = fts_calib_convert(w->c, x, &ns, &err);
		store_fast_timestamp(&t1);
		if (rc < 0) {
			fprintf(stderr, "faststamp bench: fts_calib_convert(%llu) with %zu samples: %s\n",
				(unsigned long long)x, k, strerror(errno));
			return 0;
		}
		sink = ns + err;
		lat_add(&l[i & 1], stamp_ns(&t0, &t1));
		i++;
	}
	return i;
}

/* A reader converting in a loop on one CPU while a writer adds the day on another at
 * full speed; then the reader alone on the finished history, as many times; then the
 * bracket alone. Returns 0 (H.readers says whether it ran, H.readers_why says why not),
 * or -1 with a message. */
static int hist_readers(void)
{
	cpu_set_t saved;
	struct rusage ru0;
	struct hwriter w = { .d = &H.d };
	pthread_t t;
	uint64_t n, m;
	int a = -1, b = -1, rc = -1;

	if (two_cpus(&a, &b) < 0) {
		snprintf(H.readers_why, sizeof(H.readers_why), "only one CPU available");
		return 0;
	}
	w.c = fts_calib_new();
	if (!w.c) {
		perror("faststamp bench: fts_calib_new");
		return -1;
	}
	sched_getaffinity(0, sizeof(saved), &saved);
	w.cpu = b;
	if (fts_tool_pin(a) < 0 || pthread_create(&t, NULL, hist_writer, &w) != 0) {
		snprintf(H.readers_why, sizeof(H.readers_why), "cannot pin to CPU %d or start a thread", a);
		sched_setaffinity(0, sizeof(saved), &saved);
		fts_calib_free(w.c);
		return 0;
	}
	getrusage(RUSAGE_THREAD, &ru0);
	n = read_loop(&w, 0, H.busy);
	ru_since(&ru0, &H.ru_busy);
	pthread_join(t, NULL);
	H.ru_writer = w.ru;
	H.busy_add_ns = (double)w.ns / (double)H.d.nsamp;
	if (w.err) {
		fprintf(stderr, "faststamp bench: fts_calib_add in the writer thread: %s\n",
			strerror(w.err));
		goto out;
	}
	getrusage(RUSAGE_THREAD, &ru0);
	if (!n || !read_loop(&w, n, H.alone))
		goto out;
	ru_since(&ru0, &H.ru_alone);
	for (m = 0; m < n; m++) {
		fast_timestamp_t t0, t1;
		store_fast_timestamp(&t0);
		store_fast_timestamp(&t1);
		lat_add(&H.bracket, stamp_ns(&t0, &t1));
	}
	for (int k = 0; k < 2; k++) {
		lat_summary(&H.busy[k]);
		lat_summary(&H.alone[k]);
	}
	lat_summary(&H.bracket);
	snprintf(H.readers_why, sizeof(H.readers_why), "reader on CPU %d, writer on CPU %d", a, b);
	H.readers = 1;
	rc = 0;
out:
	sched_setaffinity(0, sizeof(saved), &saved);
	fts_calib_free(w.c);
	return rc;
}

/* The simulated clock's arrays: not needed once the history figures are taken. */
static void hist_drop_sim(void)
{
	if (H.built)
		daysim_free(&H.d);
	H.built = 0;
}

static void hist_free(void)
{
	hist_drop_sim();
	fts_calib_free(H.c);
	H.c = NULL;
	free(H.day);
	H.day = NULL;
	free(H.chase);
	H.chase = NULL;
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

static void print_op(const struct op *o, const struct op *cg)
{
	printf("  %-42s %8.2f %8.2f %8.2f  %6.2f\n", o->label, o->p50, o->p10, o->p90,
	       o->p50 / cg->p50);
}

/* long_too: show the count over LAT_LONG (for calls that should be far shorter). */
static void print_lat(const char *label, const struct lat *l, int long_too)
{
	char nlong[24] = "-";

	if (long_too)
		snprintf(nlong, sizeof(nlong), "%llu", (unsigned long long)l->nlong);
	printf("  %-42s %8.0f %8.0f %8.0f %8lld %8s %8llu\n", label, l->p50, l->p99, l->p999,
	       (long long)l->max, nlong, (unsigned long long)l->n);
}

static void print_lat_head(const char *label)
{
	printf("  %-42s %8s %8s %8s %8s %8s %8s\n", label, "median", "p99", "p99.9", "max",
	       "> 1 us", "calls");
}

static void print_hist(const struct op *cg, int rounds, int quick)
{
	double per = H.knots ? (double)H.rss / (double)H.knots : NAN;

	printf("\ncalibration history (struct fts_calib, default options) fed the simulated NTP-disciplined\n"
	       "  clock of tests/daysim.h: 10 samples a second over %s\n",
	       quick ? "an hour (--quick; a day without it)" : "a day");
	printf("  %-42s %8zu\n", "samples added (fts_calib_add)", H.samples);
	printf("  %-42s %8zu  one per %.1f samples\n", "knots kept (fts_calib_count)", H.knots,
	       (double)H.samples / (double)H.knots);
	if (H.rss >= 0) {
		printf("  %-42s %8lld  %.2f MiB, growth from fts_calib_new to the last add\n",
		       "resident bytes of the history", (long long)H.rss, (double)H.rss / 1048576);
		printf("  %-42s %8.1f  %.1f over the second half alone (no fixed part)\n",
		       "resident bytes per knot kept", per, H.rss_marginal);
		if (H.thp_always)
			printf("  (transparent huge pages are always on: resident bytes grow 2 MiB at a time)\n");
	} else {
		printf("  %-42s %8s  (no /proc/self/statm)\n", "resident bytes of the history", "?");
	}
	printf("  %-42s %8.0f  %.3f s in all, adds untimed\n", "fts_calib_add, ns per add amortised",
	       H.add_ns, H.add_s);
	print_lat_head("ns per call, timed one by one");
	print_lat("fts_calib_add, each add (a second history)", &H.add, 0);
	printf("  cost per call, ns: median and p10..p90 over the %d interleaved rounds above\n", rounds);
	printf("  %-42s %8s %8s %8s  %s\n", "operation", "median", "p10", "p90", "x clock_gettime");
	for (size_t i = 0; i < NOPS; i++)
		if (ops[i].avail && is_hist_op(&ops[i]))
			print_op(&ops[i], cg);
	print_op(cg, cg);
	printf("  (random stamp: uniform over the history, from a pool of %zu read in turn; control:\n"
	       "   a pointer chase through the history's resident bytes in random order, one\n"
	       "   dependent load a call: what a look-up that misses the nearer caches pays here)\n",
	       H.nday);
	printf("  readers: fts_calib_convert timed one by one between two ordered stores, in turn a\n"
	       "  stamp in the newest interval (which every add publishes again) and a random one\n"
	       "  in what was added so far (while the writer adds: half the history on average)\n");
	if (!H.readers) {
		printf("  SKIP: %s\n", H.readers_why);
		return;
	}
	print_lat_head(H.readers_why);
	print_lat("newest interval, while the writer adds", &H.busy[0], 1);
	print_lat("newest interval, the history complete", &H.alone[0], 1);
	print_lat("random stamp, while the writer adds", &H.busy[1], 1);
	print_lat("random stamp, the history complete", &H.alone[1], 1);
	print_lat("the bracket alone (two ordered stores)", &H.bracket, 1);
	printf("  (the writer: %.0f ns per add amortised, %ld page faults and %ld involuntary context\n"
	       "   switches over its adds; the reader: %ld involuntary switches while it ran, %ld alone)\n",
	       H.busy_add_ns, H.ru_writer.ru_minflt + H.ru_writer.ru_majflt, H.ru_writer.ru_nivcsw,
	       H.ru_busy.ru_nivcsw, H.ru_alone.ru_nivcsw);
}

static void json_lat(const char *key, const struct lat *l, int ok, int long_too, int *first)
{
	char k[96];
#define LAT(suffix, v) (snprintf(k, sizeof(k), "%s_%s", key, suffix), json_num(k, ok ? (v) : NAN, first))
	LAT("p50_ns", l->p50);
	LAT("p99_ns", l->p99);
	LAT("p999_ns", l->p999);
	LAT("max_ns", (double)l->max);
	if (long_too)
		LAT("over_1us", (double)l->nlong);
	LAT("calls", (double)l->n);
#undef LAT
}

static void json_hist(int *first)
{
	json_num("history_hours", H.hours, first);
	json_num("history_samples", (double)H.samples, first);
	json_num("history_knots", (double)H.knots, first);
	json_num("history_rss_bytes", H.rss >= 0 ? (double)H.rss : NAN, first);
	json_num("history_rss_bytes_per_knot",
		 H.rss >= 0 && H.knots ? (double)H.rss / (double)H.knots : NAN, first);
	json_num("history_rss_bytes_per_knot_marginal", H.rss_marginal, first);
	json_num("history_add_ns", H.add_ns, first);
	json_lat("history_add", &H.add, 1, 0, first);
	json_lat("history_reader_newest_busy", &H.busy[0], H.readers, 1, first);
	json_lat("history_reader_newest_alone", &H.alone[0], H.readers, 1, first);
	json_lat("history_reader_random_busy", &H.busy[1], H.readers, 1, first);
	json_lat("history_reader_random_alone", &H.alone[1], H.readers, 1, first);
	json_lat("history_reader_bracket", &H.bracket, H.readers, 1, first);
	json_num("history_writer_busy_add_ns", H.readers ? H.busy_add_ns : NAN, first);
	json_num("history_writer_page_faults",
		 H.readers ? (double)(H.ru_writer.ru_minflt + H.ru_writer.ru_majflt) : NAN, first);
	json_num("history_writer_involuntary_switches", H.readers ? (double)H.ru_writer.ru_nivcsw : NAN,
		 first);
	json_num("history_reader_busy_involuntary_switches", H.readers ? (double)H.ru_busy.ru_nivcsw : NAN,
		 first);
	json_num("history_reader_alone_involuntary_switches",
		 H.readers ? (double)H.ru_alone.ru_nivcsw : NAN, first);
	if (!H.readers)
		json_str("history_reader_skipped", H.readers_why, first);
}

/* ---- main ------------------------------------------------------------------------- */

struct opts {
	int quick, json, rounds;
	const char *plot;
};

static int run_op(const char *key, const char *count, int quick)
{
	struct op *o = find_op(key);
	uint64_t n;
	int rc;

	if (o && is_hist_op(o)) {   /* the simulated history is built first, untimed */
		if (fts_tool_parse_u64(count, 1, UINT64_C(1) << 32, &n) < 0)
			return fts_tool_usage_error("bench", usage, "bad count '%s' (1..2^32)", count);
		rc = hist_day(quick);
		hist_drop_sim();
		if (rc == 0)
			o->run((size_t)n);
		hist_free();
		return rc ? 1 : 0;
	}
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
			return run_op(argv[i + 1], argv[i + 2], o.quick);
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
	/* The history next, while nothing else runs: the process clock's sampler starts
	 * with the warm-up. Its conversions are timed with the others, in the rounds. */
	if (hist_day(o.quick) < 0 || hist_adds() < 0 || hist_readers() < 0)
		goto out;
	hist_drop_sim();

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
		json_hist(&f);
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
			if (ops[i].avail && !is_hist_op(&ops[i]))
				print_op(&ops[i], cg);
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
		print_hist(cg, o.rounds, o.quick);
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
	hist_free();
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
