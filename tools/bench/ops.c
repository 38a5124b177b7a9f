/* ops.c - the operations of `faststamp bench`: each a noinline loop of n calls (so a
 * profiler can count it alone: --run-op), and the one table that lists them.
 *
 * Owns: the loops, their prep functions, the table (bench_ops), the stamp pool's recent
 * stamps and the run's random sequence. To add an operation, write its loop here and
 * give it one row in bench_ops: its key and label, and where else it is shown (2
 * threads, another clock, the fresh processes) as fields of that row.
 * May not: print, or build the history's day (history.c does; the calib_ loops only
 * read it).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/time.h>
#include <time.h>
#if defined(__x86_64__)
#  include <cpuid.h>
#endif

#include "bench_int.h"
#include "internal.h"
#include "tool.h"
#include "clock.h"

__thread volatile int64_t bench_sink;
struct bench_pool bench_pool;
static struct bench_hist *const H = &bench_hist;

static uint64_t rng = 0x9e3779b97f4a7c15u;

uint64_t bench_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- the operations --------------------------------------------------------------- */

#define OP(name) static __attribute__((noinline)) void name(size_t n)
#define BATCH_EVENTS 4096   /* events a drain round, in the event_drain row */

OP(op_store)
{
	for (size_t i = 0; i < n; i++) {
		fast_timestamp_t s;
		store_fast_timestamp(&s);
		bench_sink = (int64_t)s;
	}
}

OP(op_store_relaxed)
{
	for (size_t i = 0; i < n; i++) {
		fast_timestamp_t s;
		fts_store_relaxed(&s);
		bench_sink = (int64_t)s;
	}
}

#if defined(__x86_64__)
OP(op_rdtsc)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		bench_sink = (int64_t)(((uint64_t)hi << 32) | lo);
	}
}

OP(op_rdtscp)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t lo, hi, aux;
		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
		bench_sink = (int64_t)(((uint64_t)hi << 32) | lo);
	}
}

OP(op_lfence_rdtsc)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t lo, hi;
		/* The ordered read store_fast_timestamp uses, written out by hand here to
		 * show what the library adds around it (nothing, it should turn out). */
		__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
		bench_sink = (int64_t)(((uint64_t)hi << 32) | lo);
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
		bench_sink = (int64_t)v;
	}
}

OP(op_isb_cntvct)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		/* isb: the read cannot be speculated ahead of earlier instructions. */
		__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
		bench_sink = (int64_t)v;
	}
}
#elif defined(__riscv) && __riscv_xlen == 64
OP(op_rdtime)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		__asm__ __volatile__("rdtime %0" : "=r"(v));
		bench_sink = (int64_t)v;
	}
}
#endif

static void clock_loop(clockid_t id, size_t n)
{
	struct timespec ts;
	for (size_t i = 0; i < n; i++) {
		clock_gettime(id, &ts);
		bench_sink = ts.tv_nsec;
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
		bench_sink = tv.tv_usec;
	}
}

OP(op_time)
{
	for (size_t i = 0; i < n; i++)
		bench_sink = time(NULL);
}

/* A burst of recent stamps past the newest sample, as the stamps of a program
 * converting at once are: each converts through one clock read after it (rule 11, the
 * bridge). One untimed conversion first, so that the timed ones find a history. */
static void prep_recent(void)
{
	int64_t ns;
	for (size_t i = 0; i < NREC; i++)
		store_fast_timestamp(&bench_pool.recent[i]);
	fts_convert(&bench_pool.recent[NREC - 1], &ns, NULL);
}

/* A burst after a conversion that read the clock: stamps on its line (rule 12), as a
 * packet burst is when the one before it was converted. */
static void prep_fresh_on(clockid_t clock)
{
	fast_timestamp_t s;
	int64_t ns;

	store_fast_timestamp(&s);
	fts_convert_clock(&s, clock, &ns, NULL);   /* that clock's rule 12 line, made now */
	for (size_t i = 0; i < NREC; i++)
		store_fast_timestamp(&bench_pool.recent[i]);
}

static void prep_fresh(void)
{
	prep_fresh_on(CLOCK_REALTIME);
}

static void prep_fresh_mono(void)
{
	prep_fresh_on(CLOCK_MONOTONIC);
}

/* Wait (up to max_ns) until the history in use holds a sample at or after stamp: the
 * sampler thread's, or the publisher's of a shared history, every 100 ms. 1 if it does. */
int bench_wait_inside(fast_timestamp_t stamp, int64_t max_ns)
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
void bench_prep_inside(void)
{
	static fast_timestamp_t inside[NREC];
	static int done;

	if (!done) {
		for (size_t i = 0; i < NREC; i++)
			store_fast_timestamp(&inside[i]);
		bench_pool.inside = bench_wait_inside(inside[NREC - 1], 500000000);
		done = 1;
	}
	memcpy(bench_pool.recent, inside, sizeof(bench_pool.recent));
}

/* The time alone, as fast_timestamp_to_timespec asks for it. */
OP(op_convert)
{
	int64_t ns;
	for (size_t i = 0; i < n; i++) {
		fts_convert(&bench_pool.recent[i & (NREC - 1)], &ns, NULL);
		bench_sink = ns;
	}
}

/* The time and its error bound. */
OP(op_convert_bound)
{
	int64_t ns, err;
	for (size_t i = 0; i < n; i++) {
		fts_convert(&bench_pool.recent[i & (NREC - 1)], &ns, &err);
		bench_sink = ns + err;
	}
}

OP(op_convert_old)
{
	int64_t ns;
	for (size_t i = 0; i < n; i++) {
		fts_convert(&bench_pool.old[bench_pool.idx[i & (NREC - 1)]], &ns, NULL);
		bench_sink = ns;
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
		bench_sink = ns + err;
	}
}

/* The same on another clock (fts_convert_clock): set by the pairs below. */
OP(op_convert_mono)
{
	int64_t ns;
	for (size_t i = 0; i < n; i++) {
		fts_convert_clock(&bench_pool.recent[i & (NREC - 1)], CLOCK_MONOTONIC, &ns, NULL);
		bench_sink = ns;
	}
}

OP(op_convert_raw)
{
	int64_t ns;
	for (size_t i = 0; i < n; i++) {
		fts_convert_clock(&bench_pool.recent[i & (NREC - 1)], CLOCK_MONOTONIC_RAW, &ns, NULL);
		bench_sink = ns;
	}
}

OP(op_store_convert_mono)
{
	int64_t ns, err;
	for (size_t i = 0; i < n; i++) {
		fast_timestamp_t s;
		store_fast_timestamp(&s);
		fts_convert_clock(&s, CLOCK_MONOTONIC, &ns, &err);
		bench_sink = ns + err;
	}
}

OP(op_convert_batch_mono)
{
	for (size_t i = 0; i < n; i += BATCH) {
		fts_convert_array_clock(&bench_pool.recent[i & (NREC - 1)], BATCH, CLOCK_MONOTONIC,
					bench_pool.ns, NULL);
		bench_sink = bench_pool.ns[BATCH - 1];
	}
}

OP(op_convert_batch)
{
	for (size_t i = 0; i < n; i += BATCH) {
		fts_convert_array(&bench_pool.recent[i & (NREC - 1)], BATCH, bench_pool.ns, NULL);
		bench_sink = bench_pool.ns[BATCH - 1];
	}
}

OP(op_convert_batch_bound)
{
	for (size_t i = 0; i < n; i += BATCH) {
		fts_convert_array(&bench_pool.recent[i & (NREC - 1)], BATCH, bench_pool.ns, bench_pool.err);
		bench_sink = bench_pool.ns[BATCH - 1] + bench_pool.err[BATCH - 1];
	}
}

OP(op_convert_batch_old)
{
	for (size_t i = 0; i < n; i += BATCH) {
		fts_convert_array(&bench_pool.oldrand[i & (NREC - 1)], BATCH, bench_pool.ns, NULL);
		bench_sink = bench_pool.ns[BATCH - 1];
	}
}

OP(op_diff)
{
	int64_t d;
	for (size_t i = 0; i < n; i++) {
		fts_diff_ns(&bench_pool.recent[i & (NREC - 1)], &bench_pool.recent[(i + 7) & (NREC - 1)], &d);
		bench_sink = d;
	}
}

/* A history of its own: the counters of a simulated day, not this process's clock.
 * Random ones come from a pool larger than the caches, read on from where the last run
 * stopped: no run finds its look-ups cached by the one before. */
OP(op_calib_convert_day)
{
	int64_t ns, err;
	size_t k = H->cur;
	for (size_t i = 0; i < n; i++) {
		fts_calib_convert(H->c, H->day[(k + i) & (H->nday - 1)], &ns, &err);
		bench_sink = ns + err;
	}
	H->cur = k + n;
}

OP(op_calib_convert_recent)
{
	int64_t ns, err;
	for (size_t i = 0; i < n; i++) {
		fts_calib_convert(H->c, H->last[i & (NREC - 1)], &ns, &err);
		bench_sink = ns + err;
	}
}

/* The control: one dependent load at a random place in as many bytes as the history
 * holds (a pointer chase): what a look-up that misses the caches once costs here. */
OP(op_calib_control_load)
{
	uint64_t p = H->chase_at;
	for (size_t i = 0; i < n; i++)
		p = H->chase[p];
	H->chase_at = p;
	bench_sink = (int64_t)p;
}

/* ---- events --------------------------------------------------------------------------
 * A trace runs from the probe on, before any row is timed, so that every row sees the
 * same history (a tracing process calibrates its own), into a file removed at once
 * (on tmpfs where there is one: the disk is not what is measured). Its rings are the
 * default's (16384 records); in the idle rows (event, event_relaxed) each timed run
 * starts with them drained and writes IDLE_EVENTS, under the quarter at which a writer
 * wakes a drain backed off after idle: they time the write, not a full ring's drop nor
 * a drain beside it. The burst rows (below) time what a program that logs fast meets. */
#define IDLE_EVENTS 4000
static int event_type = -1;

static int have_trace(void)
{
	char path[64];
	int fd;

	if (event_type >= 0)
		return 1;
	snprintf(path, sizeof(path), "%s/faststamp-bench-XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if ((fd = mkstemp(path)) < 0)
		return 0;
	close(fd);
	unlink(path);
	if ((event_type = fts_event_define("bench", "a,b")) < 0 || fts_trace_start(path) < 0) {
		event_type = -1;
		return 0;
	}
	unlink(path);
	/* the thread's ring made now (its first event), not in a timed run: the calls a
	 * round makes are counted from the first ones timed */
	fts_event(event_type, 0, 0);
	fts_trace_drain();
	return 1;
}

static void prep_event(void)
{
	fts_trace_drain();
}

OP(op_event)
{
	for (size_t i = 0; i < n; i++)
		bench_sink = fts_event(event_type, i, (uint64_t)bench_sink);
}

OP(op_event_relaxed)
{
	for (size_t i = 0; i < n; i++)
		bench_sink = fts_event_relaxed(event_type, i, (uint64_t)bench_sink);
}

/* Bursts larger than the ring, the drain running as in any program that logs: no
 * drain before a run (the drain thread alone empties the ring, after backing off while
 * the other rows ran), a run one burst of BURST_EVENTS (4 default rings). An event the
 * ring refused costs what it cost and is counted (bench_burst). */
#define BURST_EVENTS 65536
struct bench_burst bench_burst;

OP(op_event_burst)
{
	size_t refused = 0;
	for (size_t i = 0; i < n; i++)
		refused += fts_event(event_type, i, (uint64_t)bench_sink) != 0;
	bench_burst.calls[0] += n;
	bench_burst.refused[0] += refused;
}

OP(op_event_relaxed_burst)
{
	size_t refused = 0;
	for (size_t i = 0; i < n; i++)
		refused += fts_event_relaxed(event_type, i, (uint64_t)bench_sink) != 0;
	bench_burst.calls[1] += n;
	bench_burst.refused[1] += refused;
}

/* The baseline a user has today: clock_gettime and the same 48-byte record, by hand,
 * into a ring of the thread's own with a release store of its head. */
static __thread struct {
	uint64_t head;
	struct { uint64_t stamp; uint32_t type, tid; uint64_t f[4]; } rec[4096];
} ring;

/* its pages touched before the first timed run, as fts_event's ring's are */
static void prep_event_cgt(void)
{
	if (!ring.head)
		memset(&ring, 0, sizeof(ring));
}

OP(op_event_cgt)
{
	for (size_t i = 0; i < n; i++) {
		struct timespec ts;
		uint64_t h = ring.head;
		clock_gettime(CLOCK_REALTIME, &ts);
		ring.rec[h & 4095].stamp = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		ring.rec[h & 4095].type = 1u << 21;
		ring.rec[h & 4095].tid = 1;
		ring.rec[h & 4095].f[0] = i;
		ring.rec[h & 4095].f[1] = (uint64_t)bench_sink;
		ring.rec[h & 4095].f[2] = ring.rec[h & 4095].f[3] = 0;
		__atomic_store_n(&ring.head, h + 1, __ATOMIC_RELEASE);
	}
	bench_sink = (int64_t)ring.head;
}

/* An event and its share of a drain round in the same thread: the packing, the CRC and
 * the write to the file. */
OP(op_event_drain)
{
	for (size_t i = 0; i < n; i += BATCH_EVENTS) {
		for (size_t k = 0; k < BATCH_EVENTS; k++)
			fts_event(event_type, k, i);
		fts_trace_drain();
	}
}

/* A drain round alone, a record: the records (BATCH_EVENTS, written untimed by this
 * thread) encoded as their differences, under their CRC, and written to the file. */
static void prep_drain(void)
{
	fts_trace_drain();
	for (size_t k = 0; k < BATCH_EVENTS; k++)
		fts_event(event_type, k, k);
}

OP(op_drain)
{
	for (size_t i = 0; i < n; i += BATCH_EVENTS)
		fts_trace_drain();
}

static int have_tai(void)
{
	struct timespec ts;
	return clock_gettime(CLOCK_TAI, &ts) == 0;
}

/* The operations, in the order of their rows. The JSON keys are <key>_ns, _p10_ns,
 * _p90_ns and _ratio_clock_gettime; with .duo also <key>_2threads_ratio (and _p10,
 * _p90); with .vs also <key>_ratio_realtime; with .child the fresh processes'
 * shared_cost_{own,shared}_<key>_*. */
struct op bench_ops[] = {
	{ .key = "store", .label = "store_fast_timestamp (ordered)", .run = op_store,
	  .duo = "store_fast_timestamp" },
	{ .key = "store_relaxed", .label = "fts_store_relaxed", .run = op_store_relaxed,
	  .duo = "fts_store_relaxed" },
	/* Events: fts_event with two fields, against the stores above and a record
	 * stamped with clock_gettime by hand */
	{ .key = "event", .label = "fts_event, 2 fields, drain idle (4000)", .run = op_event,
	  .prep = prep_event, .have = have_trace, .max = IDLE_EVENTS,
	  .duo = "fts_event, 2 fields, drain idle", .duo_prep = 1 },
	{ .key = "event_relaxed", .label = "fts_event_relaxed, drain idle (4000)",
	  .run = op_event_relaxed, .prep = prep_event, .have = have_trace, .max = IDLE_EVENTS,
	  .duo = "fts_event_relaxed, drain idle", .duo_prep = 1 },
	{ .key = "event_burst", .label = "fts_event, bursts of 65536, drain running",
	  .run = op_event_burst, .have = have_trace, .unit = BURST_EVENTS, .max = BURST_EVENTS },
	{ .key = "event_relaxed_burst", .label = "fts_event_relaxed, bursts, drain running",
	  .run = op_event_relaxed_burst, .have = have_trace, .unit = BURST_EVENTS,
	  .max = BURST_EVENTS },
	{ .key = "event_clock_gettime", .label = "clock_gettime + the record, by hand",
	  .run = op_event_cgt, .prep = prep_event_cgt, .duo = "clock_gettime + the record, by hand" },
	{ .key = "event_drain", .label = "fts_event + its drain round", .run = op_event_drain,
	  .prep = prep_event, .have = have_trace, .unit = BATCH_EVENTS },
	{ .key = "drain", .label = "drain a record (encode, CRC, write)", .run = op_drain,
	  .prep = prep_drain, .have = have_trace, .unit = BATCH_EVENTS, .max = BATCH_EVENTS },
	/* The bare reads are the control of the 2 threads: if they slow down too, it is
	 * the CPUs. */
#if defined(__x86_64__)
	{ .key = "rdtsc", .label = "rdtsc (bare)", .run = op_rdtsc, .duo = "rdtsc (bare)" },
	{ .key = "rdtscp", .label = "rdtscp", .run = op_rdtscp, .have = have_rdtscp },
	{ .key = "lfence_rdtsc", .label = "lfence; rdtsc", .run = op_lfence_rdtsc,
	  .duo = "lfence; rdtsc" },
#elif defined(__aarch64__)
	{ .key = "cntvct", .label = "mrs cntvct_el0 (bare)", .run = op_cntvct,
	  .duo = "mrs cntvct_el0 (bare)" },
	{ .key = "isb_cntvct", .label = "isb; mrs cntvct_el0", .run = op_isb_cntvct,
	  .duo = "isb; mrs cntvct_el0" },
#elif defined(__riscv) && __riscv_xlen == 64
	{ .key = "rdtime", .label = "rdtime (bare)", .run = op_rdtime, .duo = "rdtime (bare)" },
#endif
	/* The reference (BENCH_REF): the fresh processes time it last, as theirs. */
	{ .key = "clock_gettime", .label = "clock_gettime(REALTIME)", .run = op_cgt_realtime,
	  .duo = "clock_gettime(REALTIME)" },
	{ .key = "clock_gettime_monotonic", .label = "clock_gettime(MONOTONIC)",
	  .run = op_cgt_monotonic },
	{ .key = "clock_gettime_monotonic_raw", .label = "clock_gettime(MONOTONIC_RAW)",
	  .run = op_cgt_monotonic_raw },
	{ .key = "clock_gettime_realtime_coarse", .label = "clock_gettime(REALTIME_COARSE)",
	  .run = op_cgt_realtime_coarse },
	{ .key = "clock_gettime_tai", .label = "clock_gettime(TAI)", .run = op_cgt_tai,
	  .have = have_tai },
	{ .key = "gettimeofday", .label = "gettimeofday", .run = op_gettimeofday },
	{ .key = "time", .label = "time", .run = op_time },
	{ .key = "convert", .label = "fts_convert, inside history", .run = op_convert,
	  .prep = bench_prep_inside, .duo = "fts_convert, inside history" },
	{ .key = "convert_bound", .label = "fts_convert + bound, inside history",
	  .run = op_convert_bound, .prep = bench_prep_inside },
	{ .key = "convert_recent", .label = "fts_convert, past newest sample", .run = op_convert,
	  .prep = prep_recent, .child = "fts_convert, recent, in history" },
	{ .key = "convert_old", .label = "fts_convert, old stamp (random)", .run = op_convert_old,
	  .child = "fts_convert, random older stamp" },
	{ .key = "convert_batch", .label = "fts_convert_array/stamp, inside history",
	  .run = op_convert_batch, .prep = bench_prep_inside, .unit = BATCH },
	{ .key = "convert_batch_bound", .label = "fts_convert_array/stamp + bounds, inside",
	  .run = op_convert_batch_bound, .prep = bench_prep_inside, .unit = BATCH },
	{ .key = "convert_batch_recent", .label = "fts_convert_array/stamp, past newest",
	  .run = op_convert_batch, .prep = prep_recent, .unit = BATCH },
	{ .key = "convert_batch_fresh", .label = "fts_convert_array/stamp, fresh burst",
	  .run = op_convert_batch, .prep = prep_fresh, .unit = BATCH },
	{ .key = "convert_batch_fresh_bound", .label = "fts_convert_array/stamp + bounds, fresh",
	  .run = op_convert_batch_bound, .prep = prep_fresh, .unit = BATCH },
	{ .key = "convert_batch_old", .label = "fts_convert_array/stamp, old random",
	  .run = op_convert_batch_old, .unit = BATCH },
	{ .key = "diff", .label = "fts_diff_ns", .run = op_diff, .prep = prep_recent },
	{ .key = "store_convert", .label = "store + fts_convert at once", .run = op_store_convert,
	  .child = "store + fts_convert at once" },
	/* Other clocks (fts_convert_clock), against their CLOCK_REALTIME rows */
	{ .key = "convert_monotonic", .label = "fts_convert_clock MONOTONIC, inside",
	  .run = op_convert_mono, .prep = bench_prep_inside, .vs = "convert" },
	{ .key = "convert_raw", .label = "fts_convert_clock MONOTONIC_RAW, inside",
	  .run = op_convert_raw, .prep = bench_prep_inside, .vs = "convert" },
	{ .key = "convert_recent_monotonic", .label = "fts_convert_clock MONOTONIC, past newest",
	  .run = op_convert_mono, .prep = prep_recent, .vs = "convert_recent" },
	{ .key = "convert_batch_monotonic", .label = "..._array_clock/stamp MONOTONIC, inside",
	  .run = op_convert_batch_mono, .prep = bench_prep_inside, .unit = BATCH,
	  .vs = "convert_batch" },
	{ .key = "convert_batch_fresh_monotonic", .label = "..._array_clock/stamp MONOTONIC, fresh",
	  .run = op_convert_batch_mono, .prep = prep_fresh_mono, .unit = BATCH,
	  .vs = "convert_batch_fresh" },
	{ .key = "store_convert_monotonic", .label = "store + fts_convert_clock MONOTONIC",
	  .run = op_store_convert_mono, .vs = "store_convert" },
	/* A history of its own, shown with the history figures. */
	{ .key = "calib_convert_day", .label = "fts_calib_convert + bound, random stamp",
	  .run = op_calib_convert_day, .group = BENCH_HISTORY },
	{ .key = "calib_convert_recent", .label = "fts_calib_convert + bound, last second",
	  .run = op_calib_convert_recent, .group = BENCH_HISTORY },
	{ .key = "calib_control_load", .label = "control: random load in as many bytes",
	  .run = op_calib_control_load, .group = BENCH_HISTORY },
};
const size_t bench_nops = sizeof(bench_ops) / sizeof(bench_ops[0]);

struct op *bench_op(const char *key)
{
	for (size_t i = 0; i < bench_nops; i++)
		if (!strcmp(bench_ops[i].key, key))
			return &bench_ops[i];
	return NULL;
}

void bench_ops_probe(void)
{
	for (size_t i = 0; i < bench_nops; i++)
		if (bench_ops[i].group == BENCH_MACHINE)
			bench_ops[i].avail = !bench_ops[i].have || bench_ops[i].have();
}

size_t bench_unit(const struct op *o)
{
	return o->unit ? o->unit : 1;
}

/* ns between two stamps, as fts_diff_ns measures it. */
int64_t bench_stamp_ns(const fast_timestamp_t *a, const fast_timestamp_t *b)
{
	int64_t d = 0;
	fts_diff_ns(a, b, &d);
	return d;
}

double bench_time_op(const struct op *o, size_t n)
{
	int64_t t0;
	if (o->prep)
		o->prep();
	t0 = fts_tool_now(CLOCK_MONOTONIC);
	o->run(n);
	return (double)(fts_tool_now(CLOCK_MONOTONIC) - t0) / (double)n;
}

size_t bench_calls_for(const struct op *o, double target_ns)
{
	size_t unit = bench_unit(o), n = unit;
	double per;

	for (;;) {
		per = bench_time_op(o, n);
		if (per * (double)n >= target_ns / 8 || n >= ((size_t)1 << 24))
			break;
		n *= 4;
	}
	if (per <= 0)
		per = 0.1;
	n = (size_t)(target_ns / per);
	n = n / unit * unit;
	if (n < unit)
		n = unit;
	if (n > ((size_t)1 << 24))
		n = (size_t)1 << 24;
	if (o->max && n > o->max)
		n = o->max;
	return n;
}
