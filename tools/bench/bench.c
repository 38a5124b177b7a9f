/* bench.c - faststamp bench: every way to tell the time on this machine, side by side.
 * This file reads the options and runs the parts in their order; each part's file says
 * what it measures (bench_int.h lists them).
 *
 * Costs are measured in interleaved rounds (A B C ... A B C ...), so a noisy neighbour
 * or a frequency change hurts every operation alike; each round gives one ns-per-call
 * figure per operation and the table shows the median and p10..p90 over rounds.
 *
 * Owns: the options, the order of the run (fresh processes first, while this one is
 * small; the simulated history; the warm-up, accuracy and cost rounds; 2 threads) and
 * the clean-up. May not: print figures (output.c does) or hold an operation's details
 * (ops.c's table does).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_int.h"
#include "plot.h"
#include "tool.h"

const char bench_usage[] =
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
	"                 OP is a JSON key without _ns, e.g. store, clock_gettime\n"
	"usage: faststamp bench --trace-load RATE [SECONDS [DIR]]\n"
	"  Instead of the above: one thread writes RATE events a second (two fields) for\n"
	"  SECONDS (default 5) into a trace in DIR (default /dev/shm, else /tmp), removed\n"
	"  after; prints what was produced, written, dropped and lost, and the drain's CPU\n"
	"  time an event. Exit 0 when none was dropped or lost, 1 when some were.\n";

struct opts {
	int quick, json, rounds;
	const char *plot;
};

static int run_op(const char *key, const char *count, int quick)
{
	struct op *o = bench_op(key);
	uint64_t n;
	int rc;

	if (o && o->group == BENCH_HISTORY) {   /* the simulated history is built first */
		if (fts_tool_parse_u64(count, 1, UINT64_C(1) << 32, &n) < 0)
			return fts_tool_usage_error("bench", bench_usage, "bad count '%s' (1..2^32)",
						    count);
		rc = bench_hist_day(quick);
		bench_hist_drop_sim();
		if (rc == 0)
			o->run((size_t)n);
		bench_hist_free();
		return rc ? 1 : 0;
	}
	if (!o || !o->avail)
		return fts_tool_usage_error("bench", bench_usage, "unknown operation '%s'", key);
	if (fts_tool_parse_u64(count, 1, UINT64_C(1) << 32, &n) < 0)
		return fts_tool_usage_error("bench", bench_usage, "bad count '%s' (1..2^32)",
					    count);
	/* Calibrated first, as in the timed run: else the first conversion's samples come
	 * after the prepared stamps and every one of them is extrapolated backwards. */
	if (fts_clock_start() < 0) {
		perror("faststamp bench: calibration");
		return 1;
	}
	if (o->prep)
		o->prep();
	o->run((size_t)((n + bench_unit(o) - 1) / bench_unit(o) * bench_unit(o)));
	return 0;
}

/* The cost rounds: every operation available, interleaved, o.rounds times. 0 or -1. */
static int cost_rounds(int rounds, double target_ns)
{
	for (size_t i = 0; i < bench_nops; i++) {
		struct op *o = &bench_ops[i];
		if (!o->avail)
			continue;
		o->calls = bench_calls_for(o, target_ns);
		o->r = calloc((size_t)rounds, sizeof(double));
		if (!o->r) {
			perror("faststamp bench");
			return -1;
		}
	}
	for (int k = 0; k < rounds; k++)
		for (size_t i = 0; i < bench_nops; i++)
			if (bench_ops[i].avail)
				bench_ops[i].r[k] = bench_time_op(&bench_ops[i], bench_ops[i].calls);
	for (size_t i = 0; i < bench_nops; i++) {
		struct op *o = &bench_ops[i];
		if (!o->avail)
			continue;
		o->p10 = fts_tool_quantile_d(o->r, (size_t)rounds, 0.1);
		o->p50 = fts_tool_quantile_d(o->r, (size_t)rounds, 0.5);
		o->p90 = fts_tool_quantile_d(o->r, (size_t)rounds, 0.9);
	}
	return 0;
}

/* The charts: every operation's bar, and the accuracy rounds' histograms. 0 or -1. */
static int plot(const char *dir, const struct bench_run *r)
{
	struct fts_tool_bar *bars = calloc(bench_nops, sizeof(*bars));
	size_t nb = 0;
	char title[160];
	int pr;

	if (!bars) {
		perror("faststamp bench");
		return -1;
	}
	for (size_t i = 0; i < bench_nops; i++)
		if (bench_ops[i].avail)
			bars[nb++] = (struct fts_tool_bar){ bench_ops[i].label, bench_ops[i].p10,
							    bench_ops[i].p50, bench_ops[i].p90 };
	snprintf(title, sizeof(title), "faststamp bench: backend %s, clocksource %s",
		 r->in.backend, r->in.clocksource[0] ? r->in.clocksource : "?");
	pr = fts_tool_bench_plot(dir, title, bars, nb, r->now.off, r->now.n, r->late.off,
				 r->late.n, r->now.width, r->late.width);
	free(bars);
	return pr < 0 ? -1 : 0;
}

int fts_tool_bench(int argc, char **argv)
{
	struct opts o = { 0, 0, 0, NULL };
	struct bench_run run = { .in = { .size = sizeof(run.in) },
				 .first_p = { NAN, NAN, NAN } };
	struct fts__sbracket *w = NULL;
	size_t nwarm, nacc;
	int64_t first[9];
	int nfirst, rc = 1;
	double target_ns;

	enum { OPT_ROUNDS, OPT_PLOT, OPT_RUN_OP, OPT_QUICK, OPT_JSON, OPT_N };
	static const char *const names[OPT_N] = {
		[OPT_ROUNDS] = "--rounds", [OPT_PLOT] = "--plot", [OPT_RUN_OP] = "--run-op",
		[OPT_QUICK] = "--quick", [OPT_JSON] = "--json",
	};
	struct fts_tool_opts opts = FTS_TOOL_OPTS("bench", bench_usage, names, OPT_QUICK);

	/* the hidden child mode of the first-conversion rows: argv[1] only */
	if (argc > 1 && !strcmp(argv[1], "--first-conversion-child")) {
		if (argc == 2 || argc == 4)
			return bench_fresh_child(argc, argv);
		return fts_tool_usage_error("bench", bench_usage, "bad '%s'", argv[1]);
	}
	if (argc > 1 && !strcmp(argv[1], "--trace-load"))
		return bench_trace_load(argc, argv);
	for (int i = 1; i < argc; i++) {
		const char *v;
		uint64_t r;
		int k = fts_tool_opt(&opts, argc, argv, &i, &v);
		switch (k) {
		case OPT_ROUNDS:
			if (fts_tool_parse_u64(v, 3, 100000, &r) < 0)
				return fts_tool_usage_error("bench", bench_usage,
							    "bad --rounds '%s' (3..100000)", v);
			o.rounds = (int)r;
			break;
		case OPT_PLOT:
			if (!v[0])
				return fts_tool_usage_error("bench", bench_usage, "%s",
							    "--plot needs a directory");
			o.plot = v;
			break;
		case OPT_RUN_OP:   /* --run-op OP N: one operation, for instruction counts */
			if (i + 1 >= argc)
				return fts_tool_usage_error("bench", bench_usage, "%s",
							    "--run-op needs OP and N");
			bench_ops_probe();
			return run_op(v, argv[i + 1], o.quick);
		case OPT_QUICK:
			o.quick = 1;
			break;
		case OPT_JSON:
			o.json = 1;
			break;
		case FTS_OPT_ARG:
			return fts_tool_usage_error("bench", bench_usage, "unexpected argument '%s'", v);
		case FTS_OPT_END:
			break;
		default:
			return FTS_OPT_EXIT(k);
		}
	}
	if (!o.rounds)
		o.rounds = o.quick ? 15 : 101;
	run.quick = o.quick;
	run.rounds = o.rounds;
	/* Per timed run: long enough to dwarf the clock reads around it, short enough
	 * that rounds interleave many times within the run. */
	target_ns = o.quick ? 100e3 : 1e6;
	nwarm = o.quick ? 1024 : 4096;
	nacc = o.quick ? 2000 : 20000;
	nfirst = o.quick ? 3 : 9;
	bench_ops_probe();

	/* Fresh processes first, while this one is still small. */
	for (int i = 0; i < nfirst; i++) {
		int64_t v = bench_first_conversion();
		if (v > 0)
			first[run.firsts++] = v;
	}
	if (run.firsts) {
		run.first_p[0] = (double)fts_tool_quantile(first, (size_t)run.firsts, 0.0);
		run.first_p[1] = (double)fts_tool_quantile(first, (size_t)run.firsts, 0.5);
		run.first_p[2] = (double)fts_tool_quantile(first, (size_t)run.firsts, 1.0);
	}
	/* Then the shared history against a process's own, in fresh processes too. */
	bench_shared_section(o.quick);
	/* The history next, while nothing else runs: the process clock's sampler starts
	 * with the warm-up. Its conversions are timed with the others, in the rounds. */
	if (bench_hist_day(o.quick) < 0 || bench_hist_adds() < 0 || bench_hist_readers() < 0)
		goto out;
	bench_hist_drop_sim();

	w = calloc(nwarm, sizeof(*w));
	bench_pool.old = calloc(nwarm, sizeof(*bench_pool.old));
	if (!w || !bench_pool.old || bench_acc_alloc(&run.now, "immediate", nacc) < 0 ||
	    bench_acc_alloc(&run.late, "late", nwarm) < 0) {
		perror("faststamp bench");
		goto out;
	}
	if (bench_warm_up(w, nwarm, o.quick ? 300000000 : 2000000000) < 0)
		goto out;
	for (size_t i = 0; i < nwarm; i++)
		if (bench_acc_add(&run.late, &w[i]) < 0) {
			perror("faststamp bench: conversion");
			goto out;
		}
	bench_pool.nold = nwarm;
	for (size_t i = 0; i < nwarm; i++)
		bench_pool.old[i] = w[i].s;
	for (size_t i = 0; i < NREC; i++) {
		bench_pool.idx[i] = (uint32_t)(bench_rand() % nwarm);
		bench_pool.oldrand[i] = bench_pool.old[bench_pool.idx[i]];
	}
	for (size_t i = 0; i < nacc; i++) {
		struct fts__sbracket b;
		fts__sbracket_take(&b);
		if (bench_acc_add(&run.now, &b) < 0) {
			perror("faststamp bench: conversion");
			goto out;
		}
	}
	fts_get_info(&run.in);

	if (cost_rounds(o.rounds, target_ns) < 0)
		goto out;
	run.scaled = bench_scaling(o.quick ? 7 : 31, run.scale_why, sizeof(run.scale_why)) == 0;
	bench_acc_summary(&run.now);
	bench_acc_summary(&run.late);

	if (o.json)
		bench_print_json(&run);
	else
		bench_print_text(&run);
	rc = o.plot && plot(o.plot, &run) < 0 ? 1 : 0;
out:
	bench_hist_free();
	for (size_t i = 0; i < bench_nops; i++) {
		free(bench_ops[i].r);
		bench_ops[i].r = NULL;
	}
	bench_acc_free(&run.now);
	bench_acc_free(&run.late);
	free(bench_pool.old);
	bench_pool.old = NULL;
	free(w);
	return rc;
}
