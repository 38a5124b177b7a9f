/* bench_int.h - between the parts of `faststamp bench` (tools/bench/): what one part
 * measures and another prints. Nothing here is seen outside the bench.
 *
 *   bench.c     options and the run: which part runs when, and the clean-up
 *   ops.c       the operations, as one table, and the timed loop over them
 *   scale.c     two threads on two CPUs against one
 *   accuracy.c  conversions against their clock_gettime brackets
 *   history.c   struct fts_calib on a simulated day: memory, adds, readers
 *   procs.c     child processes of the bench: start, read, reap, kill on a signal
 *   fresh.c     fresh processes: the first conversion and the shared history
 *   output.c    the table and the JSON object, from what the others measured
 *   plot.c      the charts (plot.h)
 *   traceload.c --trace-load: a writer at a given event rate, and whether the drain
 *               keeps up
 *
 * Each part owns the state it measures into (a struct below, defined in its file);
 * output.c reads them all and writes none. */
#ifndef FTS_TOOL_BENCH_INT_H
#define FTS_TOOL_BENCH_INT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "faststamp.h"
#include "bracket.h"
#include "daysim.h"

extern const char bench_usage[];

#define NREC 4096   /* recent stamps, cycled through by the conversion loops */
#define BATCH 256   /* stamps per fts_convert_array call */

/* Where every loop stores what it computed, so that the compiler keeps the call. */
extern __thread volatile int64_t bench_sink;   /* a thread's own: the 2-thread rows share no line */

/* The stamps the conversion loops cycle through (ops.c prepares recent ones; the run
 * and the fresh processes fill the old ones). */
struct bench_pool {
	fast_timestamp_t recent[NREC];  /* stored in a burst, just before a round */
	fast_timestamp_t oldrand[NREC]; /* warm-up stamps in random order */
	fast_timestamp_t *old;          /* warm-up stamps in order */
	size_t nold;
	uint32_t idx[NREC];             /* random indices into old */
	int64_t ns[BATCH], err[BATCH];
	int inside;                     /* the "inside" stamps are inside the history */
};
extern struct bench_pool bench_pool;

/* One pseudo-random sequence for the whole run (xorshift64, fixed seed): the parts
 * draw from it in the order they run. */
uint64_t bench_rand(void);

/* ---- ops.c: the operations ------------------------------------------------------- */

/* Where an operation's row is shown. */
enum bench_group {
	BENCH_MACHINE,   /* the cost table */
	BENCH_HISTORY,   /* with the history figures: available once history.c built the day */
};

/* An operation: a noinline loop of n calls, and where it is shown. The table in ops.c
 * is the one place an operation is added; the fields after run are optional. */
struct op {
	const char *key;    /* JSON field <key>_ns, and --run-op's name */
	const char *label;  /* its row */
	void (*run)(size_t n);
	void (*prep)(void); /* before every timed run, untimed */
	size_t unit;        /* the call count is a multiple of this (0: 1) */
	size_t max;         /* the most calls a timed run makes (0: as many as fit the
			     * run's time) */
	enum bench_group group;
	int (*have)(void);  /* NULL, or 0 where this machine cannot run it */
	const char *duo;    /* non-NULL: timed by 2 threads against 1 too, this its row */
	int duo_prep;       /* the 2-thread timing runs prep too, before each run, with
			     * the other thread waiting (it must touch both threads' state) */
	const char *vs;     /* non-NULL: another clock's conversion, against the key of its
			     * CLOCK_REALTIME row */
	const char *child;  /* non-NULL: timed in the fresh processes too, this its row */
	/* Measured: */
	int avail;
	size_t calls;       /* per round */
	double *r;          /* ns per call, one per round */
	double p10, p50, p90;
	double duo_p10, duo_p50, duo_p90;   /* 2 threads against 1, ratio of ns per call */
};
extern struct op bench_ops[];
extern const size_t bench_nops;

/* The burst rows (event_burst, event_relaxed_burst): events written and refused by a
 * full ring over every timed run ([0] fts_event, [1] relaxed). */
struct bench_burst {
	uint64_t calls[2], refused[2];
};
extern struct bench_burst bench_burst;
/* The burst rows against the store they add to (store, store_relaxed): at most this
 * median ratio. */
#define BURST_RATIO_MAX 1.3

/* The reference of every ratio: clock_gettime(CLOCK_REALTIME). */
#define BENCH_REF "clock_gettime"
/* Another clock's conversion against the same on CLOCK_REALTIME: at most this ratio. */
#define CLOCK_RATIO_MAX 1.2

struct op *bench_op(const char *key);
/* avail for every operation of the machine's table (the history's wait for the day). */
void bench_ops_probe(void);
/* ns per call of n calls, its prep run first, untimed. */
double bench_time_op(const struct op *o, size_t n);
/* Calls per round so that one timed run lasts about target_ns (at least one unit). */
size_t bench_calls_for(const struct op *o, double target_ns);
size_t bench_unit(const struct op *o);
/* Wait (up to max_ns) until the history in use holds a sample at or after stamp. 1 if
 * it does. */
int bench_wait_inside(fast_timestamp_t stamp, int64_t max_ns);
/* Stamps inside the history into bench_pool.recent (once stored, then copied). */
void bench_prep_inside(void);
/* ns between two stamps, as fts_diff_ns measures it. */
int64_t bench_stamp_ns(const fast_timestamp_t *a, const fast_timestamp_t *b);

/* ---- scale.c: two threads against one -------------------------------------------- */

/* Two CPUs this process may use, or -1. */
int bench_two_cpus(int *a, int *b);
/* Each operation with a duo row, per round: 1 thread alone, then 2 at once. 0, or -1
 * with a reason in why. */
int bench_scaling(int rounds, char *why, size_t len);

/* ---- accuracy.c ------------------------------------------------------------------- */

struct acc {
	const char *name;
	size_t n, inside, covered;
	double *off, *width, *bound;  /* n each; each sorted by bench_acc_summary */
	double off_p[5], width_p[3], bound_p[2], worst;
};
int bench_acc_alloc(struct acc *a, const char *name, size_t n);
void bench_acc_free(struct acc *a);
/* Convert the bracketed stamp now: its offset from the midpoint, width, bound. 0 or -1. */
int bench_acc_add(struct acc *a, const struct fts__sbracket *b);
void bench_acc_summary(struct acc *a);
/* Stamps stored over span_ns, bracketed (the clock calibrated first). 0 or -1. */
int bench_warm_up(struct fts__sbracket *w, size_t n, int64_t span_ns);

/* ---- history.c: the calibration history on a simulated day ------------------------ */

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

struct bench_hist {
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
};
extern struct bench_hist bench_hist;

/* Each returns 0, or -1 after a message. */
int bench_hist_day(int quick);
int bench_hist_adds(void);
int bench_hist_readers(void);
void bench_hist_drop_sim(void);
void bench_hist_free(void);

/* ---- procs.c: child processes ----------------------------------------------------- */

/* A child of this program, its stdout (and stdin) through pipes. */
struct child {
	pid_t pid;
	int out, in;        /* -1 once closed */
	char buf[8192];     /* what it printed */
	size_t len;
};

/* Start bench --first-conversion-child [role quick|full] with FASTSTAMP_SHARED=shared
 * (NULL: this process's environment), a pipe to its stdin if with_stdin. 0, or -1 with
 * a message. */
int bench_child_start(struct child *c, const char *shared, const char *role, int quick,
		      int with_stdin);
/* Read what it prints until its output holds until (NULL: to its end). 1 if it does
 * (or the end came, for NULL), 0 if not. */
int bench_child_read(struct child *c, const char *until);
/* Read the rest, reap it: 0 if it exited 0, else -1 with a message. */
int bench_child_end(struct child *c, const char *what);
/* On an error path: kill it, reap it. */
void bench_child_kill(struct child *c);
/* The value of the line "key value" it printed: NAN if none; or the text. */
double bench_child_num(const struct child *c, const char *key);
void bench_child_str(const struct child *c, const char *key, char *out, size_t len);

/* While armed, a signal that ends the bench (SIGINT, SIGTERM, SIGHUP) first kills the
 * service and the children and removes dir with what it may hold. */
void bench_sg_arm(const char *dir);
void bench_sg_disarm(void);
/* The service started (pid, and the file it writes before renaming it), or (0, NULL)
 * gone. */
void bench_sg_service(pid_t pid, const char *newfile);

/* ---- fresh.c: fresh processes ----------------------------------------------------- */

enum { SH_OWN, SH_SHARED, SH_CLOCK, SH_ROLES };

/* Sleeps before a store and an immediate conversion: wake-ups a program might have. */
struct sh_gap {
	int64_t ns;
	const char *key, *label;
	int n, nquick;  /* conversions timed; 0: not measured */
};
extern const struct sh_gap sh_gaps[];
#define SH_NGAPS 4
#define SH_MAXCOST 8    /* the most operations of the cost rounds in a child */
#define SH_LOOP 2048    /* calls per timed run in them */
#define SH_INTERVAL_MS "100"  /* the service's sampling period: the default */

/* The cost rounds in a child: the operations with a child row, then the reference. */
size_t sh_cost_ops(const struct op *out[SH_MAXCOST]);

/* The figures of the shared history against a process's own. [SH_OWN], [SH_SHARED] and,
 * for the gaps, [SH_CLOCK]. */
struct bench_shared {
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
	double cost[2][SH_MAXCOST][3];  /* p10, p50, p90 ns per call */
	int inside[2];           /* the recent stamps were inside the history */
	double old_span_s[2];
	double gap[SH_ROLES][SH_NGAPS][2];  /* p50, p90 ns */
	double gap_old[2][SH_NGAPS][2];     /* the old stamp's, p50, p90 ns */
	int gap_calls[SH_ROLES][SH_NGAPS], gap_missed[SH_ROLES][SH_NGAPS];
	int gap_failed[2];
	int tmpfs;               /* the directory is on a tmpfs, as /run is */
	double file_bytes, file_alloc, pub_rss, map_rss, map_anon, anon_first[2], anon_end[2];
	int serve_status;        /* the service's exit status after SIGTERM, -1: killed */
};
extern struct bench_shared bench_sh;

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
/* Do the conversions after sleeps of history m meet the targets at every gap measured?
 * 1, or 0 with the first gap that does not in why. */
int sh_cold_met(int m, char *why, size_t len);
int sh_fresh_met(int m, char *why, size_t len);

/* The child's side: argv is bench --first-conversion-child [ROLE quick|full]. */
int bench_fresh_child(int argc, char **argv);

/* ---- traceload.c: a trace under load ---------------------------------------------- */

/* faststamp bench --trace-load RATE [SECONDS [DIR]] (argv[1] is --trace-load): 0 when
 * every event was written, 1 when some were dropped or lost, 2 on a usage error. */
int bench_trace_load(int argc, char **argv);
/* This program again as a child that times its first conversion: its ns, or -1. */
int64_t bench_first_conversion(void);
/* The shared-history section: bench_sh.ran, or bench_sh.why. */
void bench_shared_section(int quick);

/* ---- output.c --------------------------------------------------------------------- */

/* What the run measured besides the parts' own state. */
struct bench_run {
	int quick, rounds;
	struct fts_info in;
	double first_p[3];  /* the first conversion: min, median, max over firsts */
	int firsts;
	int scaled;         /* else scale_why says why not */
	char scale_why[96];
	struct acc now, late;
};
void bench_print_text(const struct bench_run *r);
void bench_print_json(const struct bench_run *r);

#endif
