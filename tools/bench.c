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
 *
 * The machine's shared history (`faststamp serve`) is measured in fresh processes of
 * this program, beside processes that calibrate their own: the bench starts a service
 * of its own in a private directory, and the children print their figures for it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#  include <cpuid.h>
#endif

#include "faststamp.h"
#include "bench.h"
#include "bracket.h"
#include "daysim.h"
#include "internal.h"
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
	"  counters, a reader's latency while a writer adds. Then the machine's shared\n"
	"  history against a process's own: `faststamp serve` started in a private\n"
	"  directory, fresh processes converting with it or calibrating their own: the first\n"
	"  conversion, conversion costs, a conversion right after sleeps of 0.5 to 50 ms\n"
	"  beside clock_gettime after the same sleeps, the memory it takes.\n"
	"  --quick        a few seconds: fewer rounds, shorter warm-up, an hour's history,\n"
	"                 no 50 ms sleeps\n"
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
	int inside;                     /* prep_inside's stamps are inside the history */
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

/* A burst of recent stamps past the newest sample, as the stamps of a program
 * converting at once are: each converts through one clock read after it (rule 11, the
 * bridge). One untimed conversion first, so that the timed ones find a history. */
static void prep_recent(void)
{
	int64_t ns;
	for (size_t i = 0; i < NREC; i++)
		store_fast_timestamp(&B.recent[i]);
	fts_convert(&B.recent[NREC - 1], &ns, NULL);
}

/* A burst after a conversion that read the clock: stamps on its line (rule 12), as a
 * packet burst is when the one before it was converted. */
static void prep_fresh(void)
{
	fast_timestamp_t s;
	int64_t ns;

	store_fast_timestamp(&s);
	fts_convert(&s, &ns, NULL);
	for (size_t i = 0; i < NREC; i++)
		store_fast_timestamp(&B.recent[i]);
}

/* Wait (up to max_ns) until the history in use holds a sample at or after stamp: the
 * sampler thread's, or the publisher's of a shared history, every 100 ms. 1 if it does. */
static int wait_inside(fast_timestamp_t stamp, int64_t max_ns)
{
	int64_t until = fts_tool_now(CLOCK_MONOTONIC) + max_ns;
	uint64_t lo, hi = 0;

	while ((fts_calib_range(fts__clock_history(FTS__CLK_REALTIME), &lo, &hi) < 0 || hi < stamp) &&
	       fts_tool_now(CLOCK_MONOTONIC) < until) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	return hi >= stamp;
}

/* Stamps inside the history, between two samples, as stamps converted a little later
 * are: a burst, once, then the next sample after it (a conversion no longer takes one:
 * a stamp past the newest sample is converted with a clock read after it). Once inside
 * they stay inside; copied for every timed run, as prep_recent's bursts overwrite them. */
static void prep_inside(void)
{
	static fast_timestamp_t inside[NREC];
	static int done;

	if (!done) {
		for (size_t i = 0; i < NREC; i++)
			store_fast_timestamp(&inside[i]);
		B.inside = wait_inside(inside[NREC - 1], 500000000);
		done = 1;
	}
	memcpy(B.recent, inside, sizeof(B.recent));
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

/* Store and convert at once: the stamp is past the newest sample, converted through
 * one clock read after it (rule 11, the bridge). */
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

/* The same on another clock (fts_convert_clock): set by the pairs below. */
OP(op_convert_mono)
{
	int64_t ns;
	for (size_t i = 0; i < n; i++) {
		fts_convert_clock(&B.recent[i & (NREC - 1)], CLOCK_MONOTONIC, &ns, NULL);
		sink = ns;
	}
}

OP(op_convert_raw)
{
	int64_t ns;
	for (size_t i = 0; i < n; i++) {
		fts_convert_clock(&B.recent[i & (NREC - 1)], CLOCK_MONOTONIC_RAW, &ns, NULL);
		sink = ns;
	}
}

OP(op_store_convert_mono)
{
	int64_t ns, err;
	for (size_t i = 0; i < n; i++) {
		fast_timestamp_t s;
		store_fast_timestamp(&s);
		fts_convert_clock(&s, CLOCK_MONOTONIC, &ns, &err);
		sink = ns + err;
	}
}

OP(op_convert_batch_mono)
{
	for (size_t i = 0; i < n; i += BATCH) {
		fts_convert_array_clock(&B.recent[i & (NREC - 1)], BATCH, CLOCK_MONOTONIC, B.ns, NULL);
		sink = B.ns[BATCH - 1];
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
	{ "convert_batch_fresh", "fts_convert_array/stamp, fresh burst", op_convert_batch, prep_fresh, BATCH, 1, 0, 0, 0, 0, 0 },
	{ "convert_batch_fresh_bound", "fts_convert_array/stamp + bounds, fresh", op_convert_batch_bound, prep_fresh, BATCH, 1, 0, 0, 0, 0, 0 },
	{ "convert_batch_old", "fts_convert_array/stamp, old random", op_convert_batch_old, NULL, BATCH, 1, 0, 0, 0, 0, 0 },
	{ "diff", "fts_diff_ns", op_diff, prep_recent, 1, 1, 0, 0, 0, 0, 0 },
	{ "store_convert", "store + fts_convert at once", op_store_convert, NULL, 1, 1, 0, 0, 0, 0, 0 },
	/* Other clocks (fts_convert_clock), against their CLOCK_REALTIME rows (clock_pairs) */
	{ "convert_monotonic", "fts_convert_clock MONOTONIC, inside", op_convert_mono, prep_inside, 1, 1, 0, 0, 0, 0, 0 },
	{ "convert_raw", "fts_convert_clock MONOTONIC_RAW, inside", op_convert_raw, prep_inside, 1, 1, 0, 0, 0, 0, 0 },
	{ "convert_recent_monotonic", "fts_convert_clock MONOTONIC, past newest", op_convert_mono, prep_recent, 1, 1, 0, 0, 0, 0, 0 },
	{ "convert_batch_monotonic", "..._array_clock/stamp MONOTONIC, inside", op_convert_batch_mono, prep_inside, BATCH, 1, 0, 0, 0, 0, 0 },
	{ "convert_batch_fresh_monotonic", "..._array_clock/stamp MONOTONIC, fresh", op_convert_batch_mono, prep_fresh, BATCH, 1, 0, 0, 0, 0, 0 },
	{ "store_convert_monotonic", "store + fts_convert_clock MONOTONIC", op_store_convert_mono, NULL, 1, 1, 0, 0, 0, 0, 0 },
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

/* Another clock's conversion against the same on CLOCK_REALTIME: at most this ratio. */
#define CLOCK_RATIO_MAX 1.2
static const struct { const char *other, *rt; } clock_pairs[] = {
	{ "convert_monotonic", "convert" },
	{ "convert_raw", "convert" },
	{ "convert_recent_monotonic", "convert_recent" },
	{ "convert_batch_monotonic", "convert_batch" },
	{ "convert_batch_fresh_monotonic", "convert_batch_fresh" },
	{ "store_convert_monotonic", "store_convert" },
};
#define NPAIRS (sizeof(clock_pairs) / sizeof(clock_pairs[0]))

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

static int acc_add(struct acc *a, const struct fts__sbracket *b)
{
	int64_t ns, err, miss, mid = b->t0 + (b->t1 - b->t0) / 2;

	if (fts_convert(&b->s, &ns, &err) < 0)
		return -1;
	a->off[a->n] = (double)(ns - mid);
	a->width[a->n] = (double)(b->t1 - b->t0);
	a->bound[a->n] = (double)err;
	miss = fts__sbracket_miss(b, ns);
	a->inside += miss == 0;
	a->covered += miss <= err;
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

/* ---- fresh processes: the first conversion, and the machine's shared history ------- */

/* This program runs itself again as a child (bench --first-conversion-child [ROLE
 * quick|full]) that prints "key value" lines on stdout for the parent to read. Without a
 * role it times its first conversion; with one it is a process of the shared-history
 * figures: "own" (FASTSTAMP_SHARED=0, it calibrates its own history), "shared"
 * (FASTSTAMP_SHARED names the file of a `faststamp serve` the parent started) or
 * "clock" (it only calls clock_gettime, the reference). */

enum { SH_OWN, SH_SHARED, SH_CLOCK, SH_ROLES };
static const char *const sh_roles[SH_ROLES] = { "own", "shared", "clock" };

/* Sleeps before a store and an immediate conversion: wake-ups a program might have. */
static const struct sh_gap {
	int64_t ns;
	const char *key, *label;
	int n, nquick;  /* conversions timed; 0: not measured */
} sh_gaps[] = {
	{ 500000, "500us", "0.5 ms", 200, 40 },
	{ 3000000, "3ms", "3 ms", 200, 40 },
	{ 10000000, "10ms", "10 ms", 200, 40 },
	{ 50000000, "50ms", "50 ms", 60, 0 },   /* 3 s of sleeps: not under --quick */
};
#define SH_NGAPS (sizeof(sh_gaps) / sizeof(sh_gaps[0]))
#define SH_SLOTS 200    /* the most conversions a gap times */
#define SH_ROUNDS 31    /* the cost rounds in a child, 11 with --quick */
#define SH_LOOP 2048    /* calls per timed run in them */
#define SH_NCOST 4
#define SH_INTERVAL_MS "100"  /* the service's sampling period: the default */

/* The cost rounds: the loops of the table above, in a process attached or not. */
static const struct {
	const char *key, *label;
	void (*run)(size_t n);
} sh_costs[SH_NCOST] = {
	{ "convert_recent", "fts_convert, recent, in history", op_convert },
	{ "convert_old", "fts_convert, random older stamp", op_convert_old },
	{ "store_convert", "store + fts_convert at once", op_store_convert },
	{ "clock_gettime", "clock_gettime(REALTIME)", op_cgt_realtime },
};

/* A child's buffers: static, and touched before its first conversion, so that what its
 * memory grows by after that is the library's. */
static struct {
	fast_timestamp_t s[SH_NGAPS * SH_SLOTS];  /* the stamps converted after a sleep */
	fast_timestamp_t t0[SH_SLOTS], t1[SH_SLOTS];
	int64_t v[SH_SLOTS];
	fast_timestamp_t o0[SH_SLOTS], o1[SH_SLOTS];   /* an old stamp's conversion */
	int64_t ov[SH_SLOTS];
	double r[SH_NCOST][SH_ROUNDS];
} SC;

/* A number from /proc/self/status ("Threads:", "RssAnon:" in kB), -1 if absent. */
static long proc_status(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n)) {
			v = strtol(line + n, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The name /proc/PID/smaps gives the shared history's memory (serve's memfd). */
#define SHARED_MAP_NAME "/memfd:faststamp-history (deleted)"

/* What process pid ("self" or a number) holds of the mapping named path: its size kB,
 * resident kB (the memory's pages it maps, shared with whoever maps them) and
 * anonymous kB (copies of its own; smaps' Private_* would count pages no other process
 * maps at the moment). 0, or -1 if it maps none of it. */
static int map_kib(const char *pid, const char *path, long *size, long *rss, long *anon)
{
	char name[64], line[4400];
	size_t plen = strlen(path);
	int in = 0, found = 0;
	long v;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%s/smaps", pid);
	if (!(f = fopen(name, "r")))
		return -1;
	*size = *rss = *anon = 0;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");
		line[n] = '\0';
		/* A mapping's first line starts with its address (hex, lower case), its
		 * attributes with a capital letter. */
		if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) {
			in = n > plen && !strcmp(line + n - plen, path) && line[n - plen - 1] == ' ';
			found |= in;
		} else if (in && sscanf(line, "Size: %ld", &v) == 1) {
			*size += v;
		} else if (in && sscanf(line, "Rss: %ld", &v) == 1) {
			*rss += v;
		} else if (in && sscanf(line, "Anonymous: %ld", &v) == 1) {
			*anon += v;
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

static void print_sharing(const char *suffix)
{
	char source[16], path[256], note[240];

	fts__clock_sharing(source, sizeof(source), path, sizeof(path), note, sizeof(note));
	printf("source%s %s\nnote%s %s\n", suffix, source, suffix, note);
}

/* The turns of a child of the gap figures: wait for the start the parent sends, then for
 * each gap sleep to a deadline every gap, the three children a third of it apart, and
 * time one call after each sleep, between two ordered stores: an immediate conversion
 * of a stamp stored just before, or (role clock) clock_gettime; every other sleep, but
 * for the clock, the conversion of an old stamp (inside the history: no clock read)
 * instead. Then, but for the clock, the cost rounds. */
static int sh_child_gaps(int role, int quick, long anon0)
{
	fast_timestamp_t a, b, old;
	int64_t start, ns;
	size_t kept = 0;
	char line[64];
	int rounds = quick ? 11 : SH_ROUNDS, inside;

	store_fast_timestamp(&a);
	store_fast_timestamp(&b);
	stamp_ns(&a, &b);   /* the counter's frequency is measured now, not in a turn */
	if (role != SH_CLOCK) {   /* the old stamp: a history with a sample after it */
		store_fast_timestamp(&old);
		fts_convert(&old, &ns, NULL);
		wait_inside(old, 500000000);
	}
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) || (start = strtoll(line, NULL, 10)) <= 0)
		return 1;
	for (size_t j = 0; j < SH_NGAPS; j++) {
		const struct sh_gap *g = &sh_gaps[j];
		int n = quick ? g->nquick : g->n, got = 0, gold = 0, missed = 0, failed = 0;
		int64_t base = start + g->ns * role / 3;

		if (!n)
			continue;
		for (int k = 0; k <= n; k++) {
			int64_t due = base + g->ns * k;
			struct timespec ts = { due / 1000000000, due % 1000000000 };
			fast_timestamp_t x;

			if (fts_tool_now(CLOCK_MONOTONIC) >= due) {   /* late: no sleep before it */
				missed += k > 0;
				continue;
			}
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			if (!k)
				continue;   /* the first sleep only lines the turns up */
			if (role != SH_CLOCK && k % 2 == 0) {
				store_fast_timestamp(&SC.o0[gold]);
				failed += fts_convert(&old, &ns, NULL) < 0;
				sink = ns;
				store_fast_timestamp(&SC.o1[gold++]);
				continue;
			}
			store_fast_timestamp(&x);
			store_fast_timestamp(&SC.t0[got]);
			if (role == SH_CLOCK) {
				clock_gettime(CLOCK_REALTIME, &ts);
				sink = ts.tv_nsec;
			} else if (fts_convert(&x, &ns, NULL) < 0) {
				failed++;
			} else {
				sink = ns;
			}
			store_fast_timestamp(&SC.t1[got]);
			SC.s[kept++] = x;
			got++;
		}
		start += g->ns * (n + 2);
		for (int i = 0; i < got; i++)
			SC.v[i] = stamp_ns(&SC.t0[i], &SC.t1[i]);
		printf("gap_%s_calls %d\ngap_%s_missed %d\ngap_%s_failed %d\n", g->key, got, g->key,
		       missed, g->key, failed);
		if (got)
			printf("gap_%s_p50 %lld\ngap_%s_p90 %lld\n", g->key,
			       (long long)fts_tool_quantile(SC.v, (size_t)got, 0.5), g->key,
			       (long long)fts_tool_quantile(SC.v, (size_t)got, 0.9));
		for (int i = 0; i < gold; i++)
			SC.ov[i] = stamp_ns(&SC.o0[i], &SC.o1[i]);
		if (gold)
			printf("gap_%s_old_p50 %lld\ngap_%s_old_p90 %lld\n", g->key,
			       (long long)fts_tool_quantile(SC.ov, (size_t)gold, 0.5), g->key,
			       (long long)fts_tool_quantile(SC.ov, (size_t)gold, 0.9));
	}
	if (role == SH_CLOCK)
		return 0;
	/* Stamps inside the history: a burst, then the next sample after it. */
	for (size_t i = 0; i < NREC; i++)
		store_fast_timestamp(&B.recent[i]);
	inside = wait_inside(B.recent[NREC - 1], 500000000);
	if (!kept)
		return 1;
	B.old = SC.s;
	B.nold = kept;
	for (size_t i = 0; i < NREC; i++)
		B.idx[i] = (uint32_t)(xorshift() % kept);
	for (int k = 0; k < rounds; k++)
		for (int o = 0; o < SH_NCOST; o++) {
			int64_t t0 = fts_tool_now(CLOCK_MONOTONIC);
			sh_costs[o].run(SH_LOOP);
			SC.r[o][k] = (double)(fts_tool_now(CLOCK_MONOTONIC) - t0) / SH_LOOP;
		}
	for (int o = 0; o < SH_NCOST; o++)
		printf("cost_%s_p10 %.3f\ncost_%s_p50 %.3f\ncost_%s_p90 %.3f\n", sh_costs[o].key,
		       fts_tool_quantile_d(SC.r[o], (size_t)rounds, 0.1), sh_costs[o].key,
		       fts_tool_quantile_d(SC.r[o], (size_t)rounds, 0.5), sh_costs[o].key,
		       fts_tool_quantile_d(SC.r[o], (size_t)rounds, 0.9));
	printf("recent_inside %d\nold_span_ns %lld\nrounds %d\n", inside,
	       (long long)stamp_ns(&SC.s[0], &SC.s[kept - 1]), rounds);
	printf("anon_end_kib %ld\n", proc_status("RssAnon:") - anon0);
	if (role == SH_SHARED) {
		long size, rss, anon;
		if (map_kib("self", SHARED_MAP_NAME, &size, &rss, &anon) == 0)
			printf("map_rss_kib %ld\nmap_anon_kib %ld\n", rss, anon);
	}
	print_sharing("_end");
	return 0;
}

/* argv: bench --first-conversion-child [ROLE quick|full] */
static int first_conversion_child(int argc, char **argv)
{
	int role = -1, quick = 0;
	fast_timestamp_t s;
	int64_t ns, t0, t1;
	long anon0;

	if (argc == 4) {
		for (int r = 0; r < SH_ROLES; r++)
			if (!strcmp(argv[2], sh_roles[r]))
				role = r;
		quick = !strcmp(argv[3], "quick");
		if (role < 0 || (!quick && strcmp(argv[3], "full")))
			return fts_tool_usage_error("bench", usage, "bad child mode '%s'", argv[2]);
		memset(&SC, 0, sizeof(SC));
		memset(B.recent, 0, sizeof(B.recent));
		memset(B.idx, 0, sizeof(B.idx));
	}
	/* The child's own stdio out of the memory figures: stdout's buffer is static, and
	 * the heap has grown for reading /proc once already. */
	static char outbuf[BUFSIZ];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	proc_status("RssAnon:");
	anon0 = proc_status("RssAnon:");
	if (role != SH_CLOCK) {
		store_fast_timestamp(&s);
		t0 = fts_tool_now(CLOCK_MONOTONIC);
		if (fts_convert(&s, &ns, NULL) < 0) {
			perror("faststamp bench: first conversion");
			return 1;
		}
		t1 = fts_tool_now(CLOCK_MONOTONIC);
		printf("first_ns %lld\nthreads %ld\nanon_first_kib %ld\n", (long long)(t1 - t0),
		       proc_status("Threads:"), proc_status("RssAnon:") - anon0);
		print_sharing("");
	}
	fflush(stdout);
	return role < 0 ? 0 : sh_child_gaps(role, quick, anon0);
}

/* While the section runs, a signal that ends the bench (SIGINT, SIGTERM, SIGHUP) first
 * kills the service and the children and removes the directory: only async-signal-safe
 * calls, on what was laid out before. */
static struct {
	int armed;
	volatile pid_t pid[1 + SH_ROLES];   /* [0] the service, then the children running */
	char file[4][PATH_MAX + 32];        /* what the directory may hold */
	char dir[PATH_MAX];
	struct sigaction old[3];
} SG;
static const int sg_signals[3] = { SIGINT, SIGTERM, SIGHUP };

static void sg_on_signal(int sig)
{
	for (int i = 0; i < 1 + SH_ROLES; i++)
		if (SG.pid[i] > 0)
			kill(SG.pid[i], SIGKILL);
	for (int i = 0; i < 4; i++)
		if (SG.file[i][0])
			unlink(SG.file[i]);
	rmdir(SG.dir);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void sg_arm(const char *dir)
{
	static const char *const names[3] = { "clock", "clock.lock", "serve.err" };
	struct sigaction sa;

	memset(&SG, 0, sizeof(SG));
	snprintf(SG.dir, sizeof(SG.dir), "%s", dir);
	for (int i = 0; i < 3; i++)
		snprintf(SG.file[i], sizeof(SG.file[i]), "%s/%s", dir, names[i]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sg_on_signal;
	sigfillset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sg_signals[i], &sa, &SG.old[i]);
	SG.armed = 1;
}

static void sg_disarm(void)
{
	if (!SG.armed)
		return;
	for (int i = 0; i < 3; i++)
		sigaction(sg_signals[i], &SG.old[i], NULL);
	SG.armed = 0;
}

/* sg_track(pid, 0): a child runs (slots 1..; the service has slot 0); sg_track(0, pid):
 * it no longer does. */
static void sg_track(pid_t pid, pid_t gone)
{
	if (!SG.armed)
		return;
	for (int i = pid > 0 && !gone ? 1 : 0; i < 1 + SH_ROLES; i++)
		if (SG.pid[i] == gone) {
			SG.pid[i] = pid;
			return;
		}
}

/* A child of this program, its stdout (and stdin) through pipes. */
struct child {
	pid_t pid;
	int out, in;        /* -1 once closed */
	char buf[8192];     /* what it printed */
	size_t len;
};

/* environ, with FASTSTAMP_SHARED=shared instead of any it has; NULL if out of memory.
 * One allocation: free() it. */
static char **env_with(const char *shared)
{
	size_t n = 0, k = 0, len = strlen(shared) + sizeof("FASTSTAMP_SHARED=");
	char **e;

	while (environ[n])
		n++;
	if (!(e = malloc((n + 2) * sizeof(*e) + len)))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "FASTSTAMP_SHARED=", 17))
			e[k++] = environ[i];
	e[k] = (char *)(e + n + 2);
	snprintf(e[k++], len, "FASTSTAMP_SHARED=%s", shared);
	e[k] = NULL;
	return e;
}

/* Start bench --first-conversion-child [role quick|full] with FASTSTAMP_SHARED=shared
 * (NULL: this process's environment), a pipe to its stdin if with_stdin. 0, or -1 with
 * a message. */
static int child_start(struct child *c, const char *shared, const char *role, int quick,
		       int with_stdin)
{
	char *argv[] = { "faststamp", "bench", "--first-conversion-child", (char *)role,
			 quick ? "quick" : "full", NULL };
	char **env = shared ? env_with(shared) : environ;
	int out[2] = { -1, -1 }, in[2] = { -1, -1 };

	c->pid = -1;
	c->out = c->in = -1;
	c->len = 0;
	if (!role)
		argv[3] = NULL;
	if (!env || pipe2(out, O_CLOEXEC) < 0 || (with_stdin && pipe2(in, O_CLOEXEC) < 0)) {
		perror("faststamp bench: a child's pipes");
		goto fail;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		perror("faststamp bench: fork");
		goto fail;
	}
	if (c->pid == 0) {   /* dup2 clears close-on-exec on the copies */
		if (dup2(out[1], 1) < 0 || (with_stdin && dup2(in[0], 0) < 0))
			_exit(127);
		execve("/proc/self/exe", argv, env);
		_exit(127);
	}
	sg_track(c->pid, 0);
	close(out[1]);
	c->out = out[0];
	if (with_stdin) {
		close(in[0]);
		c->in = in[1];
	}
	if (shared)
		free(env);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (in[i] >= 0)
			close(in[i]);
	}
	if (shared)
		free(env);
	return -1;
}

/* Read what the child prints until its output holds until (NULL: to its end). 1 if it
 * does (or the end came, for NULL), 0 if not. */
static int child_read(struct child *c, const char *until)
{
	for (;;) {
		ssize_t got;
		c->buf[c->len] = '\0';
		if (until && strstr(c->buf, until))
			return 1;
		if (c->len == sizeof(c->buf) - 1)
			return !until;
		got = read(c->out, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return !until;
		c->len += (size_t)got;
	}
}

static void child_close(struct child *c)
{
	if (c->out >= 0)
		close(c->out);
	if (c->in >= 0)
		close(c->in);
	c->out = c->in = -1;
}

/* Read the rest of its output and reap it: 0 if it exited 0, else -1 with a message. */
static int child_end(struct child *c, const char *what)
{
	int status;

	if (c->pid <= 0)
		return -1;
	child_read(c, NULL);
	child_close(c);
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	sg_track(0, c->pid);
	c->pid = -1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "faststamp bench: the %s child was killed by signal %d\n", what,
			WTERMSIG(status));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "faststamp bench: the %s child failed (exit %d)\n", what,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return 0;
}

/* On an error path: kill it, reap it. */
static void child_kill(struct child *c)
{
	child_close(c);
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
			;
		sg_track(0, c->pid);
	}
	c->pid = -1;
}

/* The value of the line "key value" it printed: NAN if none. */
static double child_num(const struct child *c, const char *key)
{
	size_t n = strlen(key);

	for (const char *l = c->buf; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
		if (!strncmp(l, key, n) && l[n] == ' ')
			return strtod(l + n + 1, NULL);
	return NAN;
}

static void child_str(const struct child *c, const char *key, char *out, size_t len)
{
	size_t n = strlen(key);

	out[0] = '\0';
	for (const char *l = c->buf; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
		if (!strncmp(l, key, n) && l[n] == ' ') {
			snprintf(out, len, "%.*s", (int)strcspn(l + n + 1, "\n"), l + n + 1);
			return;
		}
}

/* Run this program again as a child that times its own first conversion (with this
 * process's environment); -1 on failure (with a message), else the child's ns. */
static int64_t first_conversion(void)
{
	struct child c;
	double v;

	if (child_start(&c, NULL, NULL, 0, 0) < 0)
		return -1;
	if (child_end(&c, "first-conversion") < 0)
		return -1;
	v = child_num(&c, "first_ns");
	return isfinite(v) ? (int64_t)v : -1;
}

/* The figures of the shared history against a process's own. [SH_OWN], [SH_SHARED] and,
 * for the gaps, [SH_CLOCK]. */
static struct {
	int ran;                 /* else why says why not */
	char why[320];
	char dir[PATH_MAX], path[PATH_MAX + 8];
	int runs, rounds;
	double secs;             /* the section's wall time */
	double first[2][2];      /* median and p90 ns */
	int threads[2][2];       /* the fewest and the most threads after it */
	char source[2][16];      /* history_source of the last child of each kind */
	char note[240];          /* why a "shared" child did not use the shared history */
	int attached;            /* every shared child used it, to the end */
	double cost[2][SH_NCOST][3];  /* p10, p50, p90 ns per call */
	int inside[2];           /* the recent stamps were inside the history */
	double old_span_s[2];
	double gap[SH_ROLES][SH_NGAPS][2];  /* p50, p90 ns */
	double gap_old[2][SH_NGAPS][2];     /* the old stamp's, p50, p90 ns */
	int gap_calls[SH_ROLES][SH_NGAPS], gap_missed[SH_ROLES][SH_NGAPS];
	int gap_failed[2];
	int tmpfs;               /* the directory is on a tmpfs, as /run is */
	double file_bytes, file_alloc, pub_rss, map_rss, map_anon, anon_first[2], anon_end[2];
	int serve_status;        /* the service's exit status after SIGTERM, -1: killed */
} S;

/* Start `faststamp serve` (this program) publishing at S.path, and wait for the file;
 * its stderr goes to DIR/serve.err. The pid, or -1 with the reason in S.why. It gets
 * SIGTERM if this process dies first. */
static pid_t serve_start(void)
{
	char err[PATH_MAX + 16], msg[200] = "";
	pid_t pid, parent = getpid();
	int efd, nfd, status;
	int64_t until;
	struct stat st;
	ssize_t got;

	snprintf(err, sizeof(err), "%s/serve.err", S.dir);
	efd = open(err, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	nfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (efd < 0 || nfd < 0) {
		snprintf(S.why, sizeof(S.why), "%.200s: %s", efd < 0 ? err : "/dev/null", strerror(errno));
		goto fail;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(S.why, sizeof(S.why), "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent || dup2(nfd, 1) < 0 || dup2(efd, 2) < 0)
			_exit(127);
		execl("/proc/self/exe", "faststamp", "serve", "--path", S.path, "--interval-ms",
		      SH_INTERVAL_MS, (char *)NULL);
		_exit(127);
	}
	close(nfd);
	if (SG.armed) {
		SG.pid[0] = pid;
		snprintf(SG.file[3], sizeof(SG.file[3]), "%s.new.%ld", S.path, (long)pid);
	}
	/* It measures the counter's frequency (10 ms) and takes three samples first. */
	until = fts_tool_now(CLOCK_MONOTONIC) + 5000000000;
	while (stat(S.path, &st) < 0) {
		struct timespec ms = { 0, 1000000 };
		if (waitpid(pid, &status, WNOHANG) == pid) {
			got = pread(efd, msg, sizeof(msg) - 1, 0);
			msg[got > 0 ? got : 0] = '\0';
			msg[strcspn(msg, "\n")] = '\0';
			snprintf(S.why, sizeof(S.why), "faststamp serve exited %d: %s",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1, msg);
			SG.pid[0] = 0;
			close(efd);
			return -1;
		}
		if (fts_tool_now(CLOCK_MONOTONIC) > until) {
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			SG.pid[0] = 0;
			snprintf(S.why, sizeof(S.why), "faststamp serve published nothing in 5 s");
			close(efd);
			return -1;
		}
		nanosleep(&ms, NULL);
	}
	close(efd);
	return pid;
fail:
	if (efd >= 0)
		close(efd);
	if (nfd >= 0)
		close(nfd);
	return -1;
}

/* SIGTERM, as systemd stops it; SIGKILL if it is not gone in 2 s. Its exit status. */
static int serve_stop(pid_t pid)
{
	int64_t until = fts_tool_now(CLOCK_MONOTONIC) + 2000000000;
	int status;
	pid_t r;

	kill(pid, SIGTERM);
	while ((r = waitpid(pid, &status, WNOHANG)) == 0 || (r < 0 && errno == EINTR)) {
		struct timespec ms = { 0, 1000000 };
		if (fts_tool_now(CLOCK_MONOTONIC) > until) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			SG.pid[0] = 0;
			return -1;
		}
		nanosleep(&ms, NULL);
	}
	SG.pid[0] = 0;
	return r == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Everything in the private directory, then it. */
static void dir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[PATH_MAX + 300];

	if (d) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
				snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
				unlink(p);
			}
		closedir(d);
	}
	if (rmdir(dir) < 0)
		fprintf(stderr, "faststamp bench: rmdir %s: %s\n", dir, strerror(errno));
}

/* The first conversions: runs of each kind, in turn. 0, or -1 with S.why. */
static int sh_first(int runs)
{
	int64_t v[2][9];
	struct child c;
	char src[16];

	for (int r = 0; r < runs; r++)
		for (int m = SH_OWN; m <= SH_SHARED; m++) {
			double ns, th;
			if (child_start(&c, m == SH_OWN ? "0" : S.path, NULL, 0, 0) < 0 ||
			    child_end(&c, "first-conversion") < 0) {
				snprintf(S.why, sizeof(S.why), "a first-conversion child failed");
				return -1;
			}
			ns = child_num(&c, "first_ns");
			th = child_num(&c, "threads");
			if (!isfinite(ns) || !isfinite(th)) {
				snprintf(S.why, sizeof(S.why), "a first-conversion child said nothing");
				return -1;
			}
			v[m][r] = (int64_t)ns;
			if (!r || th < S.threads[m][0])
				S.threads[m][0] = (int)th;
			if (!r || th > S.threads[m][1])
				S.threads[m][1] = (int)th;
			child_str(&c, "source", src, sizeof(src));
			snprintf(S.source[m], sizeof(S.source[m]), "%s", src);
			if (m == SH_SHARED && strcmp(src, "shared")) {
				S.attached = 0;
				child_str(&c, "note", S.note, sizeof(S.note));
			}
		}
	for (int m = SH_OWN; m <= SH_SHARED; m++) {
		S.first[m][0] = (double)fts_tool_quantile(v[m], (size_t)runs, 0.5);
		S.first[m][1] = (double)fts_tool_quantile(v[m], (size_t)runs, 0.9);
	}
	S.runs = runs;
	return 0;
}

/* The three children of the gaps at once, then their cost rounds. 0, or -1 with S.why. */
static int sh_gaps_run(int quick)
{
	struct child c[SH_ROLES];
	const char *env[SH_ROLES] = { "0", S.path, "0" };
	char k[64], src[16];
	int m, rc = -1;

	for (m = 0; m < SH_ROLES; m++)
		c[m].pid = -1, c[m].out = c[m].in = -1;
	for (m = 0; m < SH_ROLES; m++)
		if (child_start(&c[m], env[m], sh_roles[m], quick, 1) < 0)
			goto out;
	/* Each ready (its first conversion done), then one start for all. */
	for (m = 0; m < SH_ROLES; m++)
		if (!child_read(&c[m], "ready\n")) {
			snprintf(S.why, sizeof(S.why), "the %s child of the gaps did not start", sh_roles[m]);
			goto out;
		}
	{
		int64_t start = fts_tool_now(CLOCK_MONOTONIC) + 10000000;
		for (m = 0; m < SH_ROLES; m++) {
			char line[32];
			int len = snprintf(line, sizeof(line), "%lld\n", (long long)start);
			if (write(c[m].in, line, (size_t)len) != len) {
				snprintf(S.why, sizeof(S.why), "the %s child: write: %s", sh_roles[m],
					 strerror(errno));
				goto out;
			}
			close(c[m].in);
			c[m].in = -1;
		}
	}
	for (m = 0; m < SH_ROLES; m++)
		if (child_end(&c[m], sh_roles[m]) < 0) {
			snprintf(S.why, sizeof(S.why), "the %s child of the gaps failed", sh_roles[m]);
			goto out;
		}
	for (m = 0; m < SH_ROLES; m++)
		for (size_t j = 0; j < SH_NGAPS; j++) {
			snprintf(k, sizeof(k), "gap_%s_p50", sh_gaps[j].key);
			S.gap[m][j][0] = child_num(&c[m], k);
			snprintf(k, sizeof(k), "gap_%s_p90", sh_gaps[j].key);
			S.gap[m][j][1] = child_num(&c[m], k);
			if (m != SH_CLOCK) {
				snprintf(k, sizeof(k), "gap_%s_old_p50", sh_gaps[j].key);
				S.gap_old[m][j][0] = child_num(&c[m], k);
				snprintf(k, sizeof(k), "gap_%s_old_p90", sh_gaps[j].key);
				S.gap_old[m][j][1] = child_num(&c[m], k);
			}
			snprintf(k, sizeof(k), "gap_%s_calls", sh_gaps[j].key);
			S.gap_calls[m][j] = isfinite(child_num(&c[m], k)) ? (int)child_num(&c[m], k) : 0;
			snprintf(k, sizeof(k), "gap_%s_missed", sh_gaps[j].key);
			S.gap_missed[m][j] = isfinite(child_num(&c[m], k)) ? (int)child_num(&c[m], k) : 0;
			snprintf(k, sizeof(k), "gap_%s_failed", sh_gaps[j].key);
			if (m != SH_CLOCK && child_num(&c[m], k) > 0)
				S.gap_failed[m] += (int)child_num(&c[m], k);
		}
	for (m = SH_OWN; m <= SH_SHARED; m++) {
		for (int o = 0; o < SH_NCOST; o++)
			for (int q = 0; q < 3; q++) {
				static const char *const qs[3] = { "p10", "p50", "p90" };
				snprintf(k, sizeof(k), "cost_%s_%s", sh_costs[o].key, qs[q]);
				S.cost[m][o][q] = child_num(&c[m], k);
			}
		S.inside[m] = child_num(&c[m], "recent_inside") == 1;
		S.old_span_s[m] = child_num(&c[m], "old_span_ns") / 1e9;
		S.anon_first[m] = child_num(&c[m], "anon_first_kib") * 1024;
		S.anon_end[m] = child_num(&c[m], "anon_end_kib") * 1024;
		S.rounds = (int)child_num(&c[m], "rounds");
		child_str(&c[m], "source_end", src, sizeof(src));
		if (m == SH_SHARED && strcmp(src, "shared")) {
			S.attached = 0;
			snprintf(S.source[m], sizeof(S.source[m]), "%s", src);
			child_str(&c[m], "note_end", S.note, sizeof(S.note));
		}
	}
	S.map_rss = child_num(&c[SH_SHARED], "map_rss_kib") * 1024;
	S.map_anon = child_num(&c[SH_SHARED], "map_anon_kib") * 1024;
	rc = 0;
out:
	for (m = 0; m < SH_ROLES; m++)
		child_kill(&c[m]);
	return rc;
}

static int make_dir(char *tmpl, size_t len, const char *base)
{
	snprintf(tmpl, len, "%s/faststamp-bench.XXXXXX", base);
	return mkdtemp(tmpl) ? 0 : -1;
}

/* The section: a service of its own in a private directory, fresh processes converting
 * with it and with their own histories, side by side. S.ran, or S.why. */
static void shared_section(int quick)
{
	struct fts_info in = { .size = sizeof(in) };
	int64_t t0 = fts_tool_now(CLOCK_MONOTONIC);
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];
	struct statfs fs;
	pid_t serve;

	S.attached = 1;
	S.serve_status = -1;
	if (fts_get_info(&in) < 0 || !in.counter_hz || !strcmp(in.backend, "generic")) {
		snprintf(S.why, sizeof(S.why), "backend %s: stamps are clock readings, there is "
			 "no calibration to share", in.backend);
		return;
	}
	/* On a tmpfs, as /run/faststamp is, when there is one: the pages of a disk file
	 * system's file fault in slower (a first conversion 50 us against 32 here). Mode
	 * 0700: the service's directory must be ours alone. */
	S.tmpfs = statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC;
	if (!S.tmpfs || make_dir(tmpl, sizeof(tmpl), "/dev/shm") < 0) {
		const char *base = tmp && *tmp ? tmp : "/tmp";
		if (make_dir(tmpl, sizeof(tmpl), base) < 0) {
			snprintf(S.why, sizeof(S.why), "mkdtemp in %.200s: %s", base, strerror(errno));
			return;
		}
		S.tmpfs = statfs(tmpl, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
	}
	sg_arm(tmpl);
	/* The name the kernel shows for the mapping in /proc/PID/smaps */
	if (!realpath(tmpl, S.dir))
		snprintf(S.dir, sizeof(S.dir), "%s", tmpl);
	snprintf(S.path, sizeof(S.path), "%s/clock", S.dir);
	if ((serve = serve_start()) < 0) {
		dir_remove(tmpl);
		sg_disarm();
		return;
	}
	if (sh_first(quick ? 5 : 9) == 0 && sh_gaps_run(quick) == 0) {
		char pid[24];
		long size, rss, anon;
		snprintf(pid, sizeof(pid), "%ld", (long)serve);
		if (map_kib(pid, SHARED_MAP_NAME, &size, &rss, &anon) == 0) {
			S.file_bytes = (double)size * 1024;
			S.pub_rss = (double)rss * 1024;
			S.file_alloc = S.pub_rss;   /* a memfd's pages exist once touched */
		}
		S.ran = 1;
	}
	S.serve_status = serve_stop(serve);
	dir_remove(tmpl);
	sg_disarm();
	S.secs = (double)(fts_tool_now(CLOCK_MONOTONIC) - t0) / 1e9;
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

/* The targets of the shared history: its first conversion, and immediate conversions
 * after any sleep. */
#define SH_FIRST_TARGET_NS 50000
#define SH_FRESH_P50_TARGET_NS 100
#define SH_FRESH_P90_TARGET_NS 500

/* Conversions after a sleep against clock_gettime after the same sleep: the fresh
 * ones' median and p90, the old ones' median. */
#define SH_COLD_P50_RATIO 1.5
#define SH_COLD_P90_RATIO 2.0
#define SH_COLD_OLD_RATIO 1.2
static int sh_cold_met(int m, char *why, size_t len)
{
	why[0] = '\0';
	for (size_t j = 0; j < SH_NGAPS; j++) {
		const double *g = S.gap[m][j], *o = S.gap_old[m][j], *c = S.gap[SH_CLOCK][j];
		if (!S.gap_calls[SH_OWN][j])
			continue;
		if (!(g[0] <= SH_COLD_P50_RATIO * c[0] && g[1] <= SH_COLD_P90_RATIO * c[1] &&
		      o[0] <= SH_COLD_OLD_RATIO * c[0])) {
			snprintf(why, len, " (%s: fresh %.2fx, p90 %.2fx; old %.2fx)", sh_gaps[j].label,
				 g[0] / c[0], g[1] / c[1], o[0] / c[0]);
			return 0;
		}
	}
	return 1;
}

/* Do the immediate conversions of history m meet the targets at every gap measured? 1,
 * or 0 with the first gap that does not in why. */
static int sh_fresh_met(int m, char *why, size_t len)
{
	for (size_t j = 0; j < SH_NGAPS; j++) {
		const double *g = S.gap[m][j];
		if (!S.gap_calls[m][j])
			continue;
		if (!(g[0] <= SH_FRESH_P50_TARGET_NS) || !(g[1] <= SH_FRESH_P90_TARGET_NS)) {
			snprintf(why, len, " (%s: median %.0f, p90 %.0f)", sh_gaps[j].label, g[0], g[1]);
			return 0;
		}
	}
	why[0] = '\0';
	return 1;
}

static void print_shared(int quick)
{
	static const char *const who[2] = { "own", "shared" };
	char why[2][64];

	printf("\nthe machine's shared history against a process's own: fresh processes of this program\n"
	       "  convert with their own history (own: FASTSTAMP_SHARED=0; the first conversion\n"
	       "  calibrates, a sampler thread follows) or with the one `faststamp serve --interval-ms %s`\n"
	       "  publishes (shared: FASTSTAMP_SHARED=PATH), started by the bench\n", SH_INTERVAL_MS);
	if (!S.ran) {
		printf("  SKIP: %s\n", S.why);
		return;
	}
	printf("  PATH %s, %s; %.1f s in all\n", S.path, S.tmpfs ? "a tmpfs as /run is" : "NOT a tmpfs",
	       S.secs);
	if (!S.tmpfs)
		printf("  (unlike /run: the file's pages fault in slower, first conversions take longer)\n");
	if (!S.attached)
		printf("  WARNING: a shared process did not use the shared history (history_source \"%s\"): %s\n",
		       S.source[SH_SHARED], S.note);
	printf("  %-42s %8s %8s %8s %6s\n", "first fts_convert in a process, ns", "median", "p90",
	       "threads", "runs");
	for (int m = SH_OWN; m <= SH_SHARED; m++) {
		char th[16];
		snprintf(th, sizeof(th), S.threads[m][0] == S.threads[m][1] ? "%d" : "%d-%d",
			 S.threads[m][0], S.threads[m][1]);
		printf("  %-42s %8.0f %8.0f %8s %6d", who[m], S.first[m][0], S.first[m][1], th, S.runs);
		if (m == SH_SHARED)
			printf("  target <= %d us: %s", SH_FIRST_TARGET_NS / 1000,
			       S.first[m][0] <= SH_FIRST_TARGET_NS ? "met" : "NOT met");
		putchar('\n');
	}
	printf("  (threads: the process's own, after its first conversion; runs: of each, in turn)\n");
	printf("  cost per call in those processes, ns: median and p10..p90 over %d interleaved rounds\n"
	       "  of %d calls in each\n", S.rounds, SH_LOOP);
	printf("  %-42s %8s %8s %8s  %s\n", "operation", "median", "p10", "p90", "x clock_gettime");
	for (int m = SH_OWN; m <= SH_SHARED; m++)
		for (int o = 0; o < SH_NCOST; o++) {
			char label[80];
			const double *c = S.cost[m][o];
			snprintf(label, sizeof(label), "%s: %s", who[m], sh_costs[o].label);
			printf("  %-42s %8.2f %8.2f %8.2f  %6.2f%s\n", label, c[1], c[0], c[2],
			       c[1] / S.cost[m][SH_NCOST - 1][1],
			       o == 0 && !S.inside[m] ? "  NOT inside: no sample in 0.5 s" : "");
		}
	printf("  (recent: %d stamps stored at once, converted after the next sample; older: the\n"
	       "   stamps of the sleeps below, over %.1f s, in random order)\n", NREC,
	       S.old_span_s[SH_SHARED]);
	printf("  sleep, then store a stamp and convert it at once (past the newest sample: a clock read\n"
	       "  after it), ns per call, each timed alone between two ordered stores; clock_gettime\n"
	       "  (REALTIME) timed so after the same sleeps in a third process. The three sleep to\n"
	       "  deadlines a gap apart, a third of a gap from each other.\n");
	printf("  %-8s %6s   %-17s   %-17s   %-17s   %s\n", "", "", "     own", "     shared",
	       "  clock_gettime", "median x clock_gettime");
	printf("  %-8s %6s   %8s %8s   %8s %8s   %8s %8s   %8s %8s\n", "gap", "calls", "median", "p90",
	       "median", "p90", "median", "p90", "own", "shared");
	for (size_t j = 0; j < SH_NGAPS; j++) {
		int missed = 0;
		if (!S.gap_calls[SH_OWN][j]) {
			printf("  %-8s %6s   (not with --quick)\n", sh_gaps[j].label, "-");
			continue;
		}
		for (int m = 0; m < SH_ROLES; m++)
			missed += S.gap_missed[m][j];
		printf("  %-8s %6d   %8.0f %8.0f   %8.0f %8.0f   %8.0f %8.0f   %8.2f %8.2f",
		       sh_gaps[j].label, S.gap_calls[SH_OWN][j], S.gap[SH_OWN][j][0], S.gap[SH_OWN][j][1],
		       S.gap[SH_SHARED][j][0], S.gap[SH_SHARED][j][1], S.gap[SH_CLOCK][j][0],
		       S.gap[SH_CLOCK][j][1], S.gap[SH_OWN][j][0] / S.gap[SH_CLOCK][j][0],
		       S.gap[SH_SHARED][j][0] / S.gap[SH_CLOCK][j][0]);
		if (missed)
			printf("  %d late", missed);
		putchar('\n');
	}
	printf("  (calls: own's; late: wake-ups past the next deadline, of the three, not timed)\n");
	printf("  the same, every other sleep: the conversion of an old stamp (inside the history,\n"
	       "  no clock read)\n");
	printf("  %-8s %8s %8s   %8s %8s   %8s %8s\n", "gap", "own", "p90", "shared", "p90", "own x",
	       "shared x");
	for (size_t j = 0; j < SH_NGAPS; j++) {
		if (!S.gap_calls[SH_OWN][j])
			continue;
		printf("  %-8s %8.0f %8.0f   %8.0f %8.0f   %8.2f %8.2f\n", sh_gaps[j].label,
		       S.gap_old[SH_OWN][j][0], S.gap_old[SH_OWN][j][1], S.gap_old[SH_SHARED][j][0],
		       S.gap_old[SH_SHARED][j][1], S.gap_old[SH_OWN][j][0] / S.gap[SH_CLOCK][j][0],
		       S.gap_old[SH_SHARED][j][0] / S.gap[SH_CLOCK][j][0]);
	}
	for (int m = SH_OWN; m <= SH_SHARED; m++)
		sh_cold_met(m, why[m], sizeof(why[m]));
	printf("  target against clock_gettime after the same sleep: fresh median <= %.1fx and p90\n"
	       "  <= %.1fx, old median <= %.1fx, at every gap:\n    own %s%s; shared %s%s\n",
	       SH_COLD_P50_RATIO, SH_COLD_P90_RATIO, SH_COLD_OLD_RATIO,
	       why[SH_OWN][0] ? "NOT met" : "met", why[SH_OWN], why[SH_SHARED][0] ? "NOT met" : "met",
	       why[SH_SHARED]);
	for (int m = SH_OWN; m <= SH_SHARED; m++)
		sh_fresh_met(m, why[m], sizeof(why[m]));
	printf("  target median <= %d, p90 <= %d at every gap%s:\n    own %s%s; shared %s%s\n",
	       SH_FRESH_P50_TARGET_NS, SH_FRESH_P90_TARGET_NS, quick ? " (50 ms not measured)" : "",
	       why[SH_OWN][0] ? "NOT met" : "met", why[SH_OWN], why[SH_SHARED][0] ? "NOT met" : "met",
	       why[SH_SHARED]);
	if (S.gap_failed[SH_OWN] || S.gap_failed[SH_SHARED])
		printf("  WARNING: conversions failed: %d own, %d shared\n", S.gap_failed[SH_OWN],
		       S.gap_failed[SH_SHARED]);
	printf("  memory: the shared history %.1f MiB long (sealed memory, untouched pages take\n"
	       "  none), %.0f KiB resident in the publisher's mapping; in a shared process %.0f KiB\n"
	       "  of it resident in its mapping, %.0f KiB anonymous in it\n",
	       S.file_bytes / 1048576, S.pub_rss / 1024, S.map_rss / 1024, S.map_anon / 1024);
	printf("  anonymous memory of a process, KiB, from before its first conversion: after it\n"
	       "  %+.0f shared, %+.0f own; at its end %+.0f shared, %+.0f own\n",
	       S.anon_first[SH_SHARED] / 1024, S.anon_first[SH_OWN] / 1024,
	       S.anon_end[SH_SHARED] / 1024, S.anon_end[SH_OWN] / 1024);
	if (S.serve_status != 0)
		printf("  WARNING: faststamp serve did not exit 0 on SIGTERM (%d)\n", S.serve_status);
}

static void json_shared(int *first)
{
	static const char *const who[SH_ROLES] = { "own", "shared", "clock_gettime" };
	static const char *const qs[3] = { "p10_ns", "ns", "p90_ns" };
	char k[96], why[64];
	int ok = S.ran;

#define SHN(v) ((ok) ? (double)(v) : NAN)
	if (!ok)
		json_str("shared_skipped", S.why, first);
	json_str("shared_path", ok ? S.path : "", first);
	json_str("shared_history_source", ok ? S.source[SH_SHARED] : "", first);
	json_num("shared_seconds", SHN(S.secs), first);
	json_num("shared_tmpfs", SHN(S.tmpfs), first);
	json_num("shared_runs", SHN(S.runs), first);
	for (int m = SH_OWN; m <= SH_SHARED; m++) {
		snprintf(k, sizeof(k), "shared_first_conversion_%s_ns", who[m]);
		json_num(k, SHN(S.first[m][0]), first);
		snprintf(k, sizeof(k), "shared_first_conversion_%s_p90_ns", who[m]);
		json_num(k, SHN(S.first[m][1]), first);
		snprintf(k, sizeof(k), "shared_threads_%s", who[m]);
		json_num(k, SHN(S.threads[m][1]), first);
	}
	json_num("shared_rounds", SHN(S.rounds), first);
	for (int m = SH_OWN; m <= SH_SHARED; m++)
		for (int o = 0; o < SH_NCOST; o++) {
			for (int q = 0; q < 3; q++) {
				snprintf(k, sizeof(k), "shared_cost_%s_%s_%s", who[m], sh_costs[o].key, qs[q]);
				json_num(k, SHN(S.cost[m][o][q]), first);
			}
			snprintf(k, sizeof(k), "shared_cost_%s_%s_ratio_clock_gettime", who[m],
				 sh_costs[o].key);
			json_num(k, SHN(S.cost[m][o][1] / S.cost[m][SH_NCOST - 1][1]), first);
		}
	json_num("shared_cost_own_recent_inside", SHN(S.inside[SH_OWN]), first);
	json_num("shared_cost_shared_recent_inside", SHN(S.inside[SH_SHARED]), first);
	for (size_t j = 0; j < SH_NGAPS; j++) {
		/* null for a gap --quick leaves out */
		int has = ok && S.gap_calls[SH_OWN][j];
		snprintf(k, sizeof(k), "shared_fresh_%s_calls", sh_gaps[j].key);
		json_num(k, has ? S.gap_calls[SH_OWN][j] : NAN, first);
		for (int m = 0; m < SH_ROLES; m++) {
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_ns", sh_gaps[j].key, who[m]);
			json_num(k, has ? S.gap[m][j][0] : NAN, first);
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_p90_ns", sh_gaps[j].key, who[m]);
			json_num(k, has ? S.gap[m][j][1] : NAN, first);
			if (m == SH_CLOCK)
				continue;
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_old_ns", sh_gaps[j].key, who[m]);
			json_num(k, has ? S.gap_old[m][j][0] : NAN, first);
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_old_p90_ns", sh_gaps[j].key, who[m]);
			json_num(k, has ? S.gap_old[m][j][1] : NAN, first);
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_old_ratio_clock_gettime", sh_gaps[j].key,
				 who[m]);
			json_num(k, has ? S.gap_old[m][j][0] / S.gap[SH_CLOCK][j][0] : NAN, first);
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_ratio_clock_gettime", sh_gaps[j].key, who[m]);
			json_num(k, has ? S.gap[m][j][0] / S.gap[SH_CLOCK][j][0] : NAN, first);
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_p90_ratio_clock_gettime", sh_gaps[j].key,
				 who[m]);
			json_num(k, has ? S.gap[m][j][1] / S.gap[SH_CLOCK][j][1] : NAN, first);
		}
	}
	json_num("shared_target_first_met", SHN(S.first[SH_SHARED][0] <= SH_FIRST_TARGET_NS), first);
	json_num("shared_target_fresh_own_met", SHN(sh_fresh_met(SH_OWN, why, sizeof(why))), first);
	json_num("shared_target_fresh_shared_met", SHN(sh_fresh_met(SH_SHARED, why, sizeof(why))), first);
	json_num("shared_target_cold_own_met", SHN(sh_cold_met(SH_OWN, why, sizeof(why))), first);
	json_num("shared_target_cold_shared_met", SHN(sh_cold_met(SH_SHARED, why, sizeof(why))), first);
	json_num("shared_file_bytes", SHN(S.file_bytes), first);
	json_num("shared_file_allocated_bytes", SHN(S.file_alloc), first);
	json_num("shared_publisher_map_rss_bytes", SHN(S.pub_rss), first);
	json_num("shared_client_map_rss_bytes", SHN(S.map_rss), first);
	json_num("shared_client_map_anon_bytes", SHN(S.map_anon), first);
	json_num("shared_client_anon_first_bytes", SHN(S.anon_first[SH_SHARED]), first);
	json_num("shared_client_anon_end_bytes", SHN(S.anon_end[SH_SHARED]), first);
	json_num("shared_own_anon_first_bytes", SHN(S.anon_first[SH_OWN]), first);
	json_num("shared_own_anon_end_bytes", SHN(S.anon_end[SH_OWN]), first);
	json_num("shared_serve_exit", SHN(S.serve_status), first);
#undef SHN
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
static int warm_up(struct fts__sbracket *w, size_t n, int64_t span_ns)
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
		fts__sbracket_take(&w[i]);
	}
	return 0;
}

int fts_tool_bench(int argc, char **argv)
{
	struct opts o = { 0, 0, 0, NULL };
	struct fts_info in = { .size = sizeof(in) };
	struct acc now = { 0 }, late = { 0 };
	struct fts__sbracket *w = NULL;
	const struct op *cg;
	size_t nwarm, nacc;
	int64_t first[9];
	int nfirst, firsts = 0, scaled, rc = 1;
	double target_ns, first_p[3] = { NAN, NAN, NAN };
	char scale_why[96];

	static const char *const names[] = { "--rounds", "--plot", "--run-op", "--quick", "--json" };
	struct fts_tool_opts opts = { "bench", usage, names, 5, 3, 0, 0 };

	/* the hidden child mode of the first-conversion rows: argv[1] only */
	if (argc > 1 && !strcmp(argv[1], "--first-conversion-child")) {
		if (argc == 2 || argc == 4)
			return first_conversion_child(argc, argv);
		return fts_tool_usage_error("bench", usage, "bad '%s'", argv[1]);
	}
	for (int i = 1; i < argc; i++) {
		const char *v;
		uint64_t r;
		int k = fts_tool_opt(&opts, argc, argv, &i, &v);
		switch (k) {
		case 0:
			if (fts_tool_parse_u64(v, 3, 100000, &r) < 0)
				return fts_tool_usage_error("bench", usage, "bad --rounds '%s' (3..100000)", v);
			o.rounds = (int)r;
			break;
		case 1:
			if (!v[0])
				return fts_tool_usage_error("bench", usage, "%s", "--plot needs a directory");
			o.plot = v;
			break;
		case 2:   /* --run-op OP N: one operation, for instruction counts */
			if (i + 1 >= argc)
				return fts_tool_usage_error("bench", usage, "%s", "--run-op needs OP and N");
#if defined(__x86_64__)
			find_op("rdtscp")->avail = have_rdtscp();
#endif
			return run_op(v, argv[i + 1], o.quick);
		case 3:
			o.quick = 1;
			break;
		case 4:
			o.json = 1;
			break;
		case FTS_OPT_ARG:
			return fts_tool_usage_error("bench", usage, "unexpected argument '%s'", v);
		case FTS_OPT_END:
			break;
		default:
			return FTS_OPT_EXIT(k);
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
	/* Then the shared history against a process's own, in fresh processes too. */
	shared_section(o.quick);
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
		struct fts__sbracket b;
		fts__sbracket_take(&b);
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
		for (size_t i = 0; i < NPAIRS; i++) {
			const struct op *a = find_op(clock_pairs[i].other), *b = find_op(clock_pairs[i].rt);
			char k[80];
			snprintf(k, sizeof(k), "%s_ratio_realtime", a->key);
			json_num(k, a->avail && b->avail ? a->p50 / b->p50 : NAN, &f);
		}
		json_num("convert_inside_stamps_inside", B.inside, &f);
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
		json_shared(&f);
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
		if (!B.inside)
			printf("  (NOT inside: the \"inside history\" stamps had no sample after them in 0.5 s)\n");
		printf("  another clock against CLOCK_REALTIME, median ratio (target <= %.1f):", CLOCK_RATIO_MAX);
		for (size_t i = 0; i < NPAIRS; i++) {
			const struct op *a = find_op(clock_pairs[i].other), *b = find_op(clock_pairs[i].rt);
			if (a->avail && b->avail)
				printf("%s %s %.2f", i % 3 ? "," : "\n   ", a->key, a->p50 / b->p50);
		}
		printf("\n");
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
		print_shared(o.quick);
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
