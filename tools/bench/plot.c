/* plot.c - the bench charts: data files, gnuplot scripts, and gnuplot run on them.
 *
 * The scripts use relative names and pick pngcairo or png themselves, so a user can
 * edit and rerun them in DIR. gnuplot is a separate program (not a library), found on
 * PATH at run time: the tool builds and benchmarks without it.
 *
 * Owns: the files in DIR and the gnuplot process. May not: know the bench's state
 * (it gets only the bars and samples of plot.h's call).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plot.h"
#include "tool.h"

#define BINS 60

#define TERM \
	"if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n" \
	"  set terminal pngcairo size %d,%d font 'sans,9'\n" \
	"} else {\n" \
	"  set terminal png size %d,%d\n" \
	"}\n" \
	"set termoption noenhanced\n"

static int on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path || !*path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		if (len && len + strlen(prog) + 2 < sizeof(buf)) {
			memcpy(buf, path, len);
			buf[len] = '/';
			strcpy(buf + len + 1, prog);
			if (access(buf, X_OK) == 0)
				return 1;
		}
		path += len + (path[len] == ':');
	}
	return 0;
}

static FILE *open_in(const char *dir, const char *name)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f)
		fprintf(stderr, "faststamp bench: cannot write %s: %s\n", p, strerror(errno));
	return f;
}

static int close_ok(FILE *f)
{
	int bad = ferror(f);
	return (fclose(f) == 0 && !bad) ? 0 : -1;
}

/* Label text goes inside double quotes in the data file. */
static void quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		fputc(*s == '"' ? '\'' : *s, f);
	fputc('"', f);
}

static int cost_files(const char *dir, const char *title, const struct fts_tool_bar *bars,
		      size_t n)
{
	double *v = malloc((n ? n : 1) * sizeof(double)), clip;
	FILE *d, *g;
	char hidden[512] = "";
	size_t shown = 0;

	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++)
		v[i] = bars[i].p50;
	/* A few operations cost 100x the rest (a conversion that samples); on one linear
	 * axis they would flatten every other bar, so they are named instead. */
	clip = 12 * fts_tool_quantile_d(v, n, 0.5);
	free(v);
	if (!(d = open_in(dir, "cost.dat")))
		return -1;
	fprintf(d, "# label p10 median p90 (ns per call)\n");
	for (size_t i = 0; i < n; i++) {
		if (bars[i].p50 > clip) {
			size_t l = strlen(hidden);
			snprintf(hidden + l, sizeof(hidden) - l, "%s%s: %.0f ns", l ? "; " : "",
				 bars[i].label, bars[i].p50);
			continue;
		}
		quoted(d, bars[i].label);
		fprintf(d, " %.3f %.3f %.3f\n", bars[i].p10, bars[i].p50, bars[i].p90);
		shown++;
	}
	if (close_ok(d) < 0 || !(g = open_in(dir, "cost.gp")))
		return -1;
	fprintf(g, TERM, 900, 120 + 26 * (int)shown, 900, 120 + 26 * (int)shown);
	fprintf(g, "set output 'cost.png'\n");
	fprintf(g, "set title \"%s\\ncost per call, ns: median (bar, value) and p10..p90 over rounds",
		title);
	if (hidden[0])
		fprintf(g, "\\nnot shown: %s", hidden);
	fprintf(g, "\"\n");
	fprintf(g, "set key off\nset grid xtics\nset xrange [0:*]\nset offsets 0, graph 0.12, 0, 0\n"
		   "set yrange [-0.6:%.1f] reverse\nset ytics nomirror\n"
		   "set style fill solid 0.5 border -1\n"
		   "set xlabel 'ns per call'\n", (double)shown - 0.4);
	fprintf(g, "plot 'cost.dat' using ($3/2):0:(0):3:($0-0.35):($0+0.35):ytic(1) "
		   "with boxxyerror lc rgb '#4a7ebb', \\\n"
		   "     '' using 3:0:2:4 with xerrorbars pt -1 lc rgb '#203040', \\\n"
		   "     '' using 4:0:(sprintf('  %%.1f', $3)) with labels left\n");
	return close_ok(g);
}

/* Percent of a's values in each of BINS bins over [lo, hi); outside values dropped. */
static void bin(const double *a, size_t n, double lo, double hi, double *pct)
{
	double w = (hi - lo) / BINS;
	memset(pct, 0, BINS * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		double k = floor((a[i] - lo) / w);
		if (k >= 0 && k < BINS)
			pct[(int)k] += 100.0 / (double)n;
	}
}

/* Range covering p1..p99 of a and b together, and a margin: the far tail is in the
 * table (p99, worst); here it would squeeze the body into one bin. */
static int range(const double *a, size_t na, const double *b, size_t nb, double *lo,
		 double *hi)
{
	double *all = malloc((na + nb + 1) * sizeof(double));
	if (!all)
		return -1;
	memcpy(all, a, na * sizeof(double));
	memcpy(all + na, b, nb * sizeof(double));
	*lo = fts_tool_quantile_d(all, na + nb, 0.01);
	*hi = fts_tool_quantile_d(all, na + nb, 0.99);
	free(all);
	*lo -= (*hi - *lo) / 10;
	*hi += (*hi - *lo) / 10;
	if (*hi - *lo < 10) {
		*lo -= 5;
		*hi += 5;
	}
	return 0;
}

static int hist_file(const char *dir, const char *name, const double *a, size_t na,
		     const double *b, size_t nb, double lo, double hi)
{
	double pa[BINS], pb[BINS];
	FILE *d = open_in(dir, name);

	if (!d)
		return -1;
	bin(a, na, lo, hi, pa);
	bin(b, nb, lo, hi, pb);
	fprintf(d, "# bin centre (ns), %% of immediate, %% of late\n");
	for (int k = 0; k < BINS; k++)
		fprintf(d, "%.2f %.4f %.4f\n", lo + (k + 0.5) * (hi - lo) / BINS, pa[k], pb[k]);
	return close_ok(d);
}

static int accuracy_files(const char *dir, const char *title, const double *on, size_t nn,
			  const double *ol, size_t nl, const double *wn, const double *wl)
{
	double lo, hi, wlo, whi;
	FILE *g;

	if (range(on, nn, ol, nl, &lo, &hi) < 0 || range(wn, nn, wl, nl, &wlo, &whi) < 0)
		return -1;
	if (wlo > 0)
		wlo = 0;
	if (hist_file(dir, "offset.dat", on, nn, ol, nl, lo, hi) < 0 ||
	    hist_file(dir, "width.dat", wn, nn, wl, nl, wlo, whi) < 0 ||
	    !(g = open_in(dir, "accuracy.gp")))
		return -1;
	fprintf(g, TERM, 900, 640, 900, 640);
	fprintf(g, "set output 'accuracy.png'\nset multiplot layout 2,1 title \"%s\"\n", title);
	fprintf(g, "set grid\nset ylabel '%% of stamps'\nset style fill transparent solid 0.35\n"
		   "set key top right\n");
	fprintf(g, "set title 'conversion minus clock_gettime bracket midpoint "
		   "(p1..p99 shown; immediate n=%zu, late n=%zu)'\n", nn, nl);
	fprintf(g, "set xlabel 'ns'\n");
	fprintf(g, "plot 'offset.dat' using 1:2 with boxes lc rgb '#4a7ebb' title 'immediate', \\\n"
		   "     '' using 1:3 with boxes lc rgb '#d95f02' title 'late'\n");
	fprintf(g, "set title 'bracket width: clock_gettime before and after the store "
		   "(p1..p99 shown)'\n");
	fprintf(g, "plot 'width.dat' using 1:2 with boxes lc rgb '#4a7ebb' title 'immediate', \\\n"
		   "     '' using 1:3 with boxes lc rgb '#d95f02' title 'late'\n");
	fprintf(g, "unset multiplot\n");
	return close_ok(g);
}

/* Run gnuplot on script inside dir, its input /dev/null; 0 if it exited 0, -1 if not,
 * -2 if it had not finished after PLOT_LIMIT_S (it is then killed): one run was seen
 * to hang in a test stage, never finishing the first chart. */
#define PLOT_LIMIT_S 30
static int gnuplot(const char *dir, const char *script)
{
	struct timespec tick = { 0, 10000000 };
	pid_t pid, r;
	int status = 0;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* gnuplot's chatter stays on stderr; stdout may be carrying JSON. */
		int in = open("/dev/null", O_RDONLY);
		if (in < 0 || dup2(in, 0) < 0 || chdir(dir) < 0 || dup2(2, 1) < 0)
			_exit(127);
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < PLOT_LIMIT_S * 100; i++) {
		if ((r = waitpid(pid, &status, WNOHANG)) == pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
		if (r < 0 && errno != EINTR)
			return -1;
		nanosleep(&tick, NULL);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return -2;
}

/* One chart's script; a gnuplot that hung is run once more. */
static int draw(const char *dir, const char *script)
{
	int rc = gnuplot(dir, script);

	if (rc == -2) {
		fprintf(stderr, "faststamp bench: gnuplot %s had not finished after %d s; "
			"running it once more\n", script, PLOT_LIMIT_S);
		rc = gnuplot(dir, script);
	}
	return rc;
}

int fts_tool_bench_plot(const char *dir, const char *title, const struct fts_tool_bar *bars,
			size_t nbars, const double *off_now, size_t n_now, const double *off_late,
			size_t n_late, const double *w_now, const double *w_late)
{
	struct stat st;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "faststamp bench: cannot create %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "faststamp bench: %s is not a directory\n", dir);
		return -1;
	}
	if (cost_files(dir, title, bars, nbars) < 0 ||
	    accuracy_files(dir, title, off_now, n_now, off_late, n_late, w_now, w_late) < 0) {
		fprintf(stderr, "faststamp bench: could not write the chart data in %s\n", dir);
		return -1;
	}
	if (!on_path("gnuplot")) {
		fprintf(stderr,
			"faststamp bench: gnuplot is not installed, so no PNG charts were drawn.\n"
			"  Install it with:  apt-get install gnuplot-nox\n"
			"  then draw them:   cd %s && gnuplot cost.gp && gnuplot accuracy.gp\n",
			dir);
		return 1;
	}
	if (draw(dir, "cost.gp") < 0 || draw(dir, "accuracy.gp") < 0) {
		fprintf(stderr, "faststamp bench: gnuplot failed; the scripts and data are in %s\n",
			dir);
		return 1;
	}
	fprintf(stderr, "faststamp bench: wrote %s/cost.png and %s/accuracy.png\n", dir, dir);
	return 0;
}
