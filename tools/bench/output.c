/* output.c - what `faststamp bench` prints: the table (text) or one JSON object, from
 * the figures the other parts measured. Rows, keys and verdicts are decided here and
 * nowhere else.
 *
 * Owns: stdout of the parent process. May not: measure, or change a figure (it reads
 * bench_ops, bench_hist, bench_sh and the run's struct bench_run).
 */
#include <math.h>
#include <stdio.h>

#include "bench_int.h"
#include "tool.h"

static const struct bench_hist *const H = &bench_hist;
static const struct bench_shared *const S = &bench_sh;

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
	double per = H->knots ? (double)H->rss / (double)H->knots : NAN;

	printf("\ncalibration history (struct fts_calib, default options) fed the simulated NTP-disciplined\n"
	       "  clock of tests/daysim.h: 10 samples a second over %s\n",
	       quick ? "an hour (--quick; a day without it)" : "a day");
	printf("  %-42s %8zu\n", "samples added (fts_calib_add)", H->samples);
	printf("  %-42s %8zu  one per %.1f samples\n", "knots kept (fts_calib_count)", H->knots,
	       (double)H->samples / (double)H->knots);
	if (H->rss >= 0) {
		printf("  %-42s %8lld  %.2f MiB, growth from fts_calib_new to the last add\n",
		       "resident bytes of the history", (long long)H->rss, (double)H->rss / 1048576);
		printf("  %-42s %8.1f  %.1f over the second half alone (no fixed part)\n",
		       "resident bytes per knot kept", per, H->rss_marginal);
		if (H->thp_always)
			printf("  (transparent huge pages are always on: resident bytes grow 2 MiB at a time)\n");
	} else {
		printf("  %-42s %8s  (no /proc/self/statm)\n", "resident bytes of the history", "?");
	}
	printf("  %-42s %8.0f  %.3f s in all, adds untimed\n", "fts_calib_add, ns per add amortised",
	       H->add_ns, H->add_s);
	print_lat_head("ns per call, timed one by one");
	print_lat("fts_calib_add, each add (a second history)", &H->add, 0);
	printf("  cost per call, ns: median and p10..p90 over the %d interleaved rounds above\n", rounds);
	printf("  %-42s %8s %8s %8s  %s\n", "operation", "median", "p10", "p90", "x clock_gettime");
	for (size_t i = 0; i < bench_nops; i++)
		if (bench_ops[i].avail && bench_ops[i].group == BENCH_HISTORY)
			print_op(&bench_ops[i], cg);
	print_op(cg, cg);
	printf("  (random stamp: uniform over the history, from a pool of %zu read in turn; control:\n"
	       "   a pointer chase through the history's resident bytes in random order, one\n"
	       "   dependent load a call: what a look-up that misses the nearer caches pays here)\n",
	       H->nday);
	printf("  readers: fts_calib_convert timed one by one between two ordered stores, in turn a\n"
	       "  stamp in the newest interval (which every add publishes again) and a random one\n"
	       "  in what was added so far (while the writer adds: half the history on average)\n");
	if (!H->readers) {
		printf("  SKIP: %s\n", H->readers_why);
		return;
	}
	print_lat_head(H->readers_why);
	print_lat("newest interval, while the writer adds", &H->busy[0], 1);
	print_lat("newest interval, the history complete", &H->alone[0], 1);
	print_lat("random stamp, while the writer adds", &H->busy[1], 1);
	print_lat("random stamp, the history complete", &H->alone[1], 1);
	print_lat("the bracket alone (two ordered stores)", &H->bracket, 1);
	printf("  (the writer: %.0f ns per add amortised, %ld page faults and %ld involuntary context\n"
	       "   switches over its adds; the reader: %ld involuntary switches while it ran, %ld alone)\n",
	       H->busy_add_ns, H->ru_writer.ru_minflt + H->ru_writer.ru_majflt, H->ru_writer.ru_nivcsw,
	       H->ru_busy.ru_nivcsw, H->ru_alone.ru_nivcsw);
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
	json_num("history_hours", H->hours, first);
	json_num("history_samples", (double)H->samples, first);
	json_num("history_knots", (double)H->knots, first);
	json_num("history_rss_bytes", H->rss >= 0 ? (double)H->rss : NAN, first);
	json_num("history_rss_bytes_per_knot",
		 H->rss >= 0 && H->knots ? (double)H->rss / (double)H->knots : NAN, first);
	json_num("history_rss_bytes_per_knot_marginal", H->rss_marginal, first);
	json_num("history_add_ns", H->add_ns, first);
	json_lat("history_add", &H->add, 1, 0, first);
	json_lat("history_reader_newest_busy", &H->busy[0], H->readers, 1, first);
	json_lat("history_reader_newest_alone", &H->alone[0], H->readers, 1, first);
	json_lat("history_reader_random_busy", &H->busy[1], H->readers, 1, first);
	json_lat("history_reader_random_alone", &H->alone[1], H->readers, 1, first);
	json_lat("history_reader_bracket", &H->bracket, H->readers, 1, first);
	json_num("history_writer_busy_add_ns", H->readers ? H->busy_add_ns : NAN, first);
	json_num("history_writer_page_faults",
		 H->readers ? (double)(H->ru_writer.ru_minflt + H->ru_writer.ru_majflt) : NAN, first);
	json_num("history_writer_involuntary_switches", H->readers ? (double)H->ru_writer.ru_nivcsw : NAN,
		 first);
	json_num("history_reader_busy_involuntary_switches", H->readers ? (double)H->ru_busy.ru_nivcsw : NAN,
		 first);
	json_num("history_reader_alone_involuntary_switches",
		 H->readers ? (double)H->ru_alone.ru_nivcsw : NAN, first);
	if (!H->readers)
		json_str("history_reader_skipped", H->readers_why, first);
}

static void print_shared(int quick)
{
	static const char *const who[2] = { "own", "shared" };
	const struct op *cost[SH_MAXCOST];
	size_t ncost;
	char why[2][64];

	printf("\nthe machine's shared history against a process's own: fresh processes of this program\n"
	       "  convert with their own history (own: FASTSTAMP_SHARED=0; the first conversion\n"
	       "  calibrates, a sampler thread follows) or with the one `faststamp serve --interval-ms %s`\n"
	       "  publishes (shared: FASTSTAMP_SHARED=PATH), started by the bench\n", SH_INTERVAL_MS);
	if (!S->ran) {
		printf("  SKIP: %s\n", S->why);
		return;
	}
	printf("  PATH %s, %s; %.1f s in all\n", S->path, S->tmpfs ? "a tmpfs as /run is" : "NOT a tmpfs",
	       S->secs);
	if (!S->tmpfs)
		printf("  (unlike /run: the file's pages fault in slower, first conversions take longer)\n");
	if (!S->attached)
		printf("  WARNING: a shared process did not use the shared history (history_source \"%s\"): %s\n",
		       S->source[SH_SHARED], S->note);
	printf("  %-42s %8s %8s %8s %6s\n", "first fts_convert in a process, ns", "median", "p90",
	       "threads", "runs");
	for (int m = SH_OWN; m <= SH_SHARED; m++) {
		char th[16];
		snprintf(th, sizeof(th), S->threads[m][0] == S->threads[m][1] ? "%d" : "%d-%d",
			 S->threads[m][0], S->threads[m][1]);
		printf("  %-42s %8.0f %8.0f %8s %6d", who[m], S->first[m][0], S->first[m][1], th, S->runs);
		if (m == SH_SHARED)
			printf("  target <= %d us: %s", SH_FIRST_TARGET_NS / 1000,
			       S->first[m][0] <= SH_FIRST_TARGET_NS ? "met" : "NOT met");
		putchar('\n');
	}
	printf("  (threads: the process's own, after its first conversion; runs: of each, in turn)\n");
	printf("  cost per call in those processes, ns: median and p10..p90 over %d interleaved rounds\n"
	       "  of %d calls in each\n", S->rounds, SH_LOOP);
	printf("  %-42s %8s %8s %8s  %s\n", "operation", "median", "p10", "p90", "x clock_gettime");
	ncost = sh_cost_ops(cost);
	for (int m = SH_OWN; m <= SH_SHARED; m++)
		for (size_t o = 0; o < ncost; o++) {
			char label[80];
			const double *c = S->cost[m][o];
			snprintf(label, sizeof(label), "%s: %s", who[m],
				 cost[o]->child ? cost[o]->child : cost[o]->label);
			printf("  %-42s %8.2f %8.2f %8.2f  %6.2f%s\n", label, c[1], c[0], c[2],
			       c[1] / S->cost[m][ncost - 1][1],
			       o == 0 && !S->inside[m] ? "  NOT inside: no sample in 0.5 s" : "");
		}
	printf("  (recent: %d stamps stored at once, converted after the next sample; older: the\n"
	       "   stamps of the sleeps below, over %.1f s, in random order)\n", NREC,
	       S->old_span_s[SH_SHARED]);
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
		if (!S->gap_calls[SH_OWN][j]) {
			printf("  %-8s %6s   (not with --quick)\n", sh_gaps[j].label, "-");
			continue;
		}
		for (int m = 0; m < SH_ROLES; m++)
			missed += S->gap_missed[m][j];
		printf("  %-8s %6d   %8.0f %8.0f   %8.0f %8.0f   %8.0f %8.0f   %8.2f %8.2f",
		       sh_gaps[j].label, S->gap_calls[SH_OWN][j], S->gap[SH_OWN][j][0], S->gap[SH_OWN][j][1],
		       S->gap[SH_SHARED][j][0], S->gap[SH_SHARED][j][1], S->gap[SH_CLOCK][j][0],
		       S->gap[SH_CLOCK][j][1], S->gap[SH_OWN][j][0] / S->gap[SH_CLOCK][j][0],
		       S->gap[SH_SHARED][j][0] / S->gap[SH_CLOCK][j][0]);
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
		if (!S->gap_calls[SH_OWN][j])
			continue;
		printf("  %-8s %8.0f %8.0f   %8.0f %8.0f   %8.2f %8.2f\n", sh_gaps[j].label,
		       S->gap_old[SH_OWN][j][0], S->gap_old[SH_OWN][j][1], S->gap_old[SH_SHARED][j][0],
		       S->gap_old[SH_SHARED][j][1], S->gap_old[SH_OWN][j][0] / S->gap[SH_CLOCK][j][0],
		       S->gap_old[SH_SHARED][j][0] / S->gap[SH_CLOCK][j][0]);
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
	if (S->gap_failed[SH_OWN] || S->gap_failed[SH_SHARED])
		printf("  WARNING: conversions failed: %d own, %d shared\n", S->gap_failed[SH_OWN],
		       S->gap_failed[SH_SHARED]);
	printf("  memory: the shared history %.1f MiB long (sealed memory, untouched pages take\n"
	       "  none), %.0f KiB resident in the publisher's mapping; in a shared process %.0f KiB\n"
	       "  of it resident in its mapping, %.0f KiB anonymous in it\n",
	       S->file_bytes / 1048576, S->pub_rss / 1024, S->map_rss / 1024, S->map_anon / 1024);
	printf("  anonymous memory of a process, KiB, from before its first conversion: after it\n"
	       "  %+.0f shared, %+.0f own; at its end %+.0f shared, %+.0f own\n",
	       S->anon_first[SH_SHARED] / 1024, S->anon_first[SH_OWN] / 1024,
	       S->anon_end[SH_SHARED] / 1024, S->anon_end[SH_OWN] / 1024);
	if (S->serve_status != 0)
		printf("  WARNING: faststamp serve did not exit 0 on SIGTERM (%d)\n", S->serve_status);
}

static void json_shared(int *first)
{
	static const char *const who[SH_ROLES] = { "own", "shared", "clock_gettime" };
	static const char *const qs[3] = { "p10_ns", "ns", "p90_ns" };
	const struct op *cost[SH_MAXCOST];
	size_t ncost;
	char k[96], why[64];
	int ok = S->ran;

#define SHN(v) ((ok) ? (double)(v) : NAN)
	if (!ok)
		json_str("shared_skipped", S->why, first);
	json_str("shared_path", ok ? S->path : "", first);
	json_str("shared_history_source", ok ? S->source[SH_SHARED] : "", first);
	json_num("shared_seconds", SHN(S->secs), first);
	json_num("shared_tmpfs", SHN(S->tmpfs), first);
	json_num("shared_runs", SHN(S->runs), first);
	for (int m = SH_OWN; m <= SH_SHARED; m++) {
		snprintf(k, sizeof(k), "shared_first_conversion_%s_ns", who[m]);
		json_num(k, SHN(S->first[m][0]), first);
		snprintf(k, sizeof(k), "shared_first_conversion_%s_p90_ns", who[m]);
		json_num(k, SHN(S->first[m][1]), first);
		snprintf(k, sizeof(k), "shared_threads_%s", who[m]);
		json_num(k, SHN(S->threads[m][1]), first);
	}
	json_num("shared_rounds", SHN(S->rounds), first);
	ncost = sh_cost_ops(cost);
	for (int m = SH_OWN; m <= SH_SHARED; m++)
		for (size_t o = 0; o < ncost; o++) {
			for (int q = 0; q < 3; q++) {
				snprintf(k, sizeof(k), "shared_cost_%s_%s_%s", who[m], cost[o]->key, qs[q]);
				json_num(k, SHN(S->cost[m][o][q]), first);
			}
			snprintf(k, sizeof(k), "shared_cost_%s_%s_ratio_clock_gettime", who[m],
				 cost[o]->key);
			json_num(k, SHN(S->cost[m][o][1] / S->cost[m][ncost - 1][1]), first);
		}
	json_num("shared_cost_own_recent_inside", SHN(S->inside[SH_OWN]), first);
	json_num("shared_cost_shared_recent_inside", SHN(S->inside[SH_SHARED]), first);
	for (size_t j = 0; j < SH_NGAPS; j++) {
		/* null for a gap --quick leaves out */
		int has = ok && S->gap_calls[SH_OWN][j];
		snprintf(k, sizeof(k), "shared_fresh_%s_calls", sh_gaps[j].key);
		json_num(k, has ? S->gap_calls[SH_OWN][j] : NAN, first);
		for (int m = 0; m < SH_ROLES; m++) {
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_ns", sh_gaps[j].key, who[m]);
			json_num(k, has ? S->gap[m][j][0] : NAN, first);
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_p90_ns", sh_gaps[j].key, who[m]);
			json_num(k, has ? S->gap[m][j][1] : NAN, first);
			if (m == SH_CLOCK)
				continue;
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_old_ns", sh_gaps[j].key, who[m]);
			json_num(k, has ? S->gap_old[m][j][0] : NAN, first);
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_old_p90_ns", sh_gaps[j].key, who[m]);
			json_num(k, has ? S->gap_old[m][j][1] : NAN, first);
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_old_ratio_clock_gettime", sh_gaps[j].key,
				 who[m]);
			json_num(k, has ? S->gap_old[m][j][0] / S->gap[SH_CLOCK][j][0] : NAN, first);
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_ratio_clock_gettime", sh_gaps[j].key, who[m]);
			json_num(k, has ? S->gap[m][j][0] / S->gap[SH_CLOCK][j][0] : NAN, first);
			snprintf(k, sizeof(k), "shared_fresh_%s_%s_p90_ratio_clock_gettime", sh_gaps[j].key,
				 who[m]);
			json_num(k, has ? S->gap[m][j][1] / S->gap[SH_CLOCK][j][1] : NAN, first);
		}
	}
	json_num("shared_target_first_met", SHN(S->first[SH_SHARED][0] <= SH_FIRST_TARGET_NS), first);
	json_num("shared_target_fresh_own_met", SHN(sh_fresh_met(SH_OWN, why, sizeof(why))), first);
	json_num("shared_target_fresh_shared_met", SHN(sh_fresh_met(SH_SHARED, why, sizeof(why))), first);
	json_num("shared_target_cold_own_met", SHN(sh_cold_met(SH_OWN, why, sizeof(why))), first);
	json_num("shared_target_cold_shared_met", SHN(sh_cold_met(SH_SHARED, why, sizeof(why))), first);
	json_num("shared_file_bytes", SHN(S->file_bytes), first);
	json_num("shared_file_allocated_bytes", SHN(S->file_alloc), first);
	json_num("shared_publisher_map_rss_bytes", SHN(S->pub_rss), first);
	json_num("shared_client_map_rss_bytes", SHN(S->map_rss), first);
	json_num("shared_client_map_anon_bytes", SHN(S->map_anon), first);
	json_num("shared_client_anon_first_bytes", SHN(S->anon_first[SH_SHARED]), first);
	json_num("shared_client_anon_end_bytes", SHN(S->anon_end[SH_SHARED]), first);
	json_num("shared_own_anon_first_bytes", SHN(S->anon_first[SH_OWN]), first);
	json_num("shared_own_anon_end_bytes", SHN(S->anon_end[SH_OWN]), first);
	json_num("shared_serve_exit", SHN(S->serve_status), first);
#undef SHN
}

static void json_ops(const struct op *cg, int *f)
{
	char k[80];

	for (size_t i = 0; i < bench_nops; i++) {
		const struct op *o = &bench_ops[i];
		if (!o->avail)
			continue;
		snprintf(k, sizeof(k), "%s_ns", o->key);
		json_num(k, o->p50, f);
		snprintf(k, sizeof(k), "%s_p10_ns", o->key);
		json_num(k, o->p10, f);
		snprintf(k, sizeof(k), "%s_p90_ns", o->key);
		json_num(k, o->p90, f);
		snprintf(k, sizeof(k), "%s_ratio_clock_gettime", o->key);
		json_num(k, o->p50 / cg->p50, f);
	}
	for (size_t i = 0; i < bench_nops; i++) {
		const struct op *a = &bench_ops[i], *b = a->vs ? bench_op(a->vs) : NULL;
		if (!b)
			continue;
		snprintf(k, sizeof(k), "%s_ratio_realtime", a->key);
		json_num(k, a->avail && b->avail ? a->p50 / b->p50 : NAN, f);
	}
}

/* The burst rows against the store they add to, and the share a full ring refused. */
static const char *const burst_key[2] = { "event_burst", "event_relaxed_burst" };
static const char *const burst_ref[2] = { "store", "store_relaxed" };

static double burst_ratio(int k)
{
	const struct op *a = bench_op(burst_key[k]), *b = bench_op(burst_ref[k]);
	return a && b && a->avail && b->avail ? a->p50 / b->p50 : NAN;
}

static double burst_refused(int k)
{
	return bench_burst.calls[k] ? (double)bench_burst.refused[k] / (double)bench_burst.calls[k]
				    : NAN;
}

static void print_burst(void)
{
	if (isnan(burst_ratio(0)))
		return;
	printf("  events in bursts, the drain running, against the store they add to, median\n"
	       "  ratio (target <= %.1f):", BURST_RATIO_MAX);
	for (int k = 0; k < 2; k++)
		printf("%s %s/%s %.2f (%.1f%% refused: ring full)", k ? "," : "", burst_key[k],
		       burst_ref[k], burst_ratio(k), 100 * burst_refused(k));
	printf("\n");
}

static void json_burst(int *f)
{
	char k[80];

	for (int i = 0; i < 2; i++) {
		snprintf(k, sizeof(k), "%s_ratio_%s", burst_key[i], burst_ref[i]);
		json_num(k, burst_ratio(i), f);
		snprintf(k, sizeof(k), "%s_refused_fraction", burst_key[i]);
		json_num(k, burst_refused(i), f);
	}
}

void bench_print_json(const struct bench_run *r)
{
	const struct op *cg = bench_op(BENCH_REF);
	int f = 1;

	printf("{");
	json_str("backend", r->in.backend, &f);
	json_str("counter", r->in.counter, &f);
	json_num("counter_hz", (double)r->in.counter_hz, &f);
	json_str("clocksource", r->in.clocksource, &f);
	json_num("rounds", r->rounds, &f);
	json_num("cpus", fts_tool_cpus(), &f);
	json_ops(cg, &f);
	json_burst(&f);
	json_num("convert_inside_stamps_inside", bench_pool.inside, &f);
	json_num("first_conversion_ns", r->first_p[1], &f);
	json_num("first_conversion_min_ns", r->first_p[0], &f);
	json_num("first_conversion_max_ns", r->first_p[2], &f);
	for (size_t i = 0; i < bench_nops; i++) {
		const struct op *o = &bench_ops[i];
		char k[80];
		if (!o->duo || !o->avail)
			continue;
		snprintf(k, sizeof(k), "%s_2threads_ratio", o->key);
		json_num(k, r->scaled ? o->duo_p50 : NAN, &f);
		snprintf(k, sizeof(k), "%s_2threads_ratio_p10", o->key);
		json_num(k, r->scaled ? o->duo_p10 : NAN, &f);
		snprintf(k, sizeof(k), "%s_2threads_ratio_p90", o->key);
		json_num(k, r->scaled ? o->duo_p90 : NAN, &f);
	}
	if (!r->scaled)
		json_str("scaling_skipped", r->scale_why, &f);
	json_acc(&r->now, &f);
	json_acc(&r->late, &f);
	json_hist(&f);
	json_shared(&f);
	printf("\n}\n");
}

void bench_print_text(const struct bench_run *r)
{
	const struct op *cg = bench_op(BENCH_REF);
	int n = 0;

	printf("faststamp bench: backend %s", r->in.backend);
	if (r->in.counter_hz)
		printf(", counter %s at %.3f MHz", r->in.counter, (double)r->in.counter_hz / 1e6);
	printf(", clocksource %s, %d CPUs\n\n", r->in.clocksource[0] ? r->in.clocksource : "?",
	       fts_tool_cpus());
	printf("cost per call, ns: median and p10..p90 over %d interleaved rounds\n", r->rounds);
	printf("  %-42s %8s %8s %8s  %s\n", "operation", "median", "p10", "p90",
	       "x clock_gettime");
	for (size_t i = 0; i < bench_nops; i++)
		if (bench_ops[i].avail && bench_ops[i].group == BENCH_MACHINE)
			print_op(&bench_ops[i], cg);
	if (!bench_pool.inside)
		printf("  (NOT inside: the \"inside history\" stamps had no sample after them in 0.5 s)\n");
	printf("  another clock against CLOCK_REALTIME, median ratio (target <= %.1f):", CLOCK_RATIO_MAX);
	for (size_t i = 0; i < bench_nops; i++) {
		const struct op *a = &bench_ops[i], *b = a->vs ? bench_op(a->vs) : NULL;
		if (!b)
			continue;
		if (a->avail && b->avail)
			printf("%s %s %.2f", n % 3 ? "," : "\n   ", a->key, a->p50 / b->p50);
		n++;
	}
	printf("\n");
	print_burst();
	if (r->firsts)
		printf("  %-42s %8.0f %8.0f %8.0f  (min/max of %d fresh processes)\n",
		       "first fts_convert in a process", r->first_p[1], r->first_p[0], r->first_p[2],
		       r->firsts);
	printf("\n2 threads on 2 CPUs at once vs 1 alone: ns per call ratio (> 1: shared state)\n");
	if (r->scaled) {
		printf("  %s\n", r->scale_why);
		for (size_t i = 0; i < bench_nops; i++) {
			const struct op *o = &bench_ops[i];
			if (o->duo && o->avail)
				printf("  %-42s %8.3f %8.3f %8.3f\n", o->duo, o->duo_p50, o->duo_p10,
				       o->duo_p90);
		}
	} else {
		printf("  SKIP: %s\n", r->scale_why);
	}
	printf("\naccuracy: conversion minus the midpoint of its clock_gettime bracket, ns\n"
	       "  (immediate: converted at once; late: stored over the warm-up, converted after)\n");
	printf("  %-9s %7s %8s %8s %8s %8s %8s %8s   %6s %6s  %6s  %8s %8s\n", "round",
	       "stamps", "p1", "p10", "median", "p90", "p99", "worst", "width", "w p99",
	       "bound", "inside", "covered");
	print_acc(&r->now);
	print_acc(&r->late);
	printf("  (width: bracket width median and p99; bound: median err_ns; inside: conversion\n"
	       "   within the bracket; covered: [ns - err, ns + err] meets the bracket)\n");
	print_hist(cg, r->rounds, r->quick);
	print_shared(r->quick);
}
