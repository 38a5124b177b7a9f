/* plot.h - between the bench subcommand and its chart writer (plot.c). */
#ifndef FTS_TOOL_BENCH_PLOT_H
#define FTS_TOOL_BENCH_PLOT_H

#include <stddef.h>

/* One bar of the cost chart: median and p10..p90 over rounds, ns per call. */
struct fts_tool_bar {
	const char *label;
	double p10, p50, p90;
};

/* Write dir/cost.png (horizontal bars) and dir/accuracy.png (histograms of conversion
 * minus bracket midpoint and of bracket widths, immediate and late) with gnuplot, plus
 * the .dat and .gp files behind them. dir is created if missing. Messages go to
 * stderr. Returns 0 when both charts were written, 1 when gnuplot is missing or
 * failed (the data files are still there), -1 when dir cannot be written. */
int fts_tool_bench_plot(const char *dir, const char *title, const struct fts_tool_bar *bars,
			size_t nbars, const double *off_now, size_t n_now, const double *off_late,
			size_t n_late, const double *w_now, const double *w_late);

#endif
