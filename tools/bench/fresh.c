/* fresh.c - fresh processes of this program: the first conversion a process makes,
 * and the machine's shared history (`faststamp serve`) against a process's own.
 *
 * The bench starts a service of its own in a private directory, and children that
 * convert with it ("shared"), with a history of their own ("own") or only call
 * clock_gettime ("clock", the reference); each prints its figures as "key value" lines
 * that the parent reads (the child protocol: the keys printed here are the keys read
 * here). procs.c starts, reads and reaps them.
 *
 * Owns: both sides of that protocol, the service's start and stop, bench_sh and the
 * verdicts on it. May not: print to stdout in the parent (output.c does).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_int.h"
#include "internal.h"
#include "tool.h"
#include "clock.h"

/* This program runs itself again as a child (bench --first-conversion-child [ROLE
 * quick|full]) that prints "key value" lines on stdout for the parent to read. Without a
 * role it times its first conversion; with one it is a process of the shared-history
 * figures: "own" (FASTSTAMP_SHARED=0, it calibrates its own history), "shared"
 * (FASTSTAMP_SHARED names the file of a `faststamp serve` the parent started) or
 * "clock" (it only calls clock_gettime, the reference). */
static const char *const sh_roles[SH_ROLES] = { "own", "shared", "clock" };

const struct sh_gap sh_gaps[SH_NGAPS] = {
	{ 500000, "500us", "0.5 ms", 200, 40 },
	{ 3000000, "3ms", "3 ms", 200, 40 },
	{ 10000000, "10ms", "10 ms", 200, 40 },
	{ 50000000, "50ms", "50 ms", 60, 0 },   /* 3 s of sleeps: not under --quick */
};
#define SH_SLOTS 200    /* the most conversions a gap times */
#define SH_ROUNDS 31    /* the cost rounds in a child, 11 with --quick */

struct bench_shared bench_sh;
static struct bench_shared *const S = &bench_sh;

/* A child times each operation of the list in turn, SH_LOOP calls a round. */
size_t sh_cost_ops(const struct op *out[SH_MAXCOST])
{
	size_t n = 0;

	for (size_t i = 0; i < bench_nops && n < SH_MAXCOST - 1; i++)
		if (bench_ops[i].child)
			out[n++] = &bench_ops[i];
	out[n++] = bench_op(BENCH_REF);
	return n;
}

/* A child's buffers: static, and touched before its first conversion, so that what its
 * memory grows by after that is the library's. */
static struct {
	fast_timestamp_t s[SH_NGAPS * SH_SLOTS];  /* the stamps converted after a sleep */
	fast_timestamp_t t0[SH_SLOTS], t1[SH_SLOTS];
	int64_t v[SH_SLOTS];
	fast_timestamp_t o0[SH_SLOTS], o1[SH_SLOTS];   /* an old stamp's conversion */
	int64_t ov[SH_SLOTS];
	double r[SH_MAXCOST][SH_ROUNDS];
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
	const struct op *cost[SH_MAXCOST];
	int64_t start, ns;
	size_t kept = 0, ncost;
	char line[64];
	int rounds = quick ? 11 : SH_ROUNDS, inside;

	store_fast_timestamp(&a);
	store_fast_timestamp(&b);
	bench_stamp_ns(&a, &b);   /* the counter's frequency is measured now, not in a turn */
	if (role != SH_CLOCK) {   /* the old stamp: a history with a sample after it */
		store_fast_timestamp(&old);
		fts_convert(&old, &ns, NULL);
		bench_wait_inside(old, 500000000);
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
				bench_sink = ns;
				store_fast_timestamp(&SC.o1[gold++]);
				continue;
			}
			store_fast_timestamp(&x);
			store_fast_timestamp(&SC.t0[got]);
			if (role == SH_CLOCK) {
				clock_gettime(CLOCK_REALTIME, &ts);
				bench_sink = ts.tv_nsec;
			} else if (fts_convert(&x, &ns, NULL) < 0) {
				failed++;
			} else {
				bench_sink = ns;
			}
			store_fast_timestamp(&SC.t1[got]);
			SC.s[kept++] = x;
			got++;
		}
		start += g->ns * (n + 2);
		for (int i = 0; i < got; i++)
			SC.v[i] = bench_stamp_ns(&SC.t0[i], &SC.t1[i]);
		printf("gap_%s_calls %d\ngap_%s_missed %d\ngap_%s_failed %d\n", g->key, got, g->key,
		       missed, g->key, failed);
		if (got)
			printf("gap_%s_p50 %lld\ngap_%s_p90 %lld\n", g->key,
			       (long long)fts_tool_quantile(SC.v, (size_t)got, 0.5), g->key,
			       (long long)fts_tool_quantile(SC.v, (size_t)got, 0.9));
		for (int i = 0; i < gold; i++)
			SC.ov[i] = bench_stamp_ns(&SC.o0[i], &SC.o1[i]);
		if (gold)
			printf("gap_%s_old_p50 %lld\ngap_%s_old_p90 %lld\n", g->key,
			       (long long)fts_tool_quantile(SC.ov, (size_t)gold, 0.5), g->key,
			       (long long)fts_tool_quantile(SC.ov, (size_t)gold, 0.9));
	}
	if (role == SH_CLOCK)
		return 0;
	/* Stamps inside the history: a burst, then the next sample after it. */
	for (size_t i = 0; i < NREC; i++)
		store_fast_timestamp(&bench_pool.recent[i]);
	inside = bench_wait_inside(bench_pool.recent[NREC - 1], 500000000);
	if (!kept)
		return 1;
	bench_pool.old = SC.s;
	bench_pool.nold = kept;
	for (size_t i = 0; i < NREC; i++)
		bench_pool.idx[i] = (uint32_t)(bench_rand() % kept);
	ncost = sh_cost_ops(cost);
	for (int k = 0; k < rounds; k++)
		for (size_t o = 0; o < ncost; o++) {
			int64_t t0 = fts_tool_now(CLOCK_MONOTONIC);
			cost[o]->run(SH_LOOP);
			SC.r[o][k] = (double)(fts_tool_now(CLOCK_MONOTONIC) - t0) / SH_LOOP;
		}
	for (size_t o = 0; o < ncost; o++)
		printf("cost_%s_p10 %.3f\ncost_%s_p50 %.3f\ncost_%s_p90 %.3f\n", cost[o]->key,
		       fts_tool_quantile_d(SC.r[o], (size_t)rounds, 0.1), cost[o]->key,
		       fts_tool_quantile_d(SC.r[o], (size_t)rounds, 0.5), cost[o]->key,
		       fts_tool_quantile_d(SC.r[o], (size_t)rounds, 0.9));
	printf("recent_inside %d\nold_span_ns %lld\nrounds %d\n", inside,
	       (long long)bench_stamp_ns(&SC.s[0], &SC.s[kept - 1]), rounds);
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
int bench_fresh_child(int argc, char **argv)
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
			return fts_tool_usage_error("bench", bench_usage, "bad child mode '%s'", argv[2]);
		memset(&SC, 0, sizeof(SC));
		memset(bench_pool.recent, 0, sizeof(bench_pool.recent));
		memset(bench_pool.idx, 0, sizeof(bench_pool.idx));
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

/* Run this program again as a child that times its own first conversion (with this
 * process's environment); -1 on failure (with a message), else the child's ns. */
int64_t bench_first_conversion(void)
{
	struct child c;
	double v;

	if (bench_child_start(&c, NULL, NULL, 0, 0) < 0)
		return -1;
	if (bench_child_end(&c, "first-conversion") < 0)
		return -1;
	v = bench_child_num(&c, "first_ns");
	return isfinite(v) ? (int64_t)v : -1;
}

/* Start `faststamp serve` (this program) publishing at S->path, and wait for the file;
 * its stderr goes to DIR/serve.err. The pid, or -1 with the reason in S->why. It gets
 * SIGTERM if this process dies first. */
static pid_t serve_start(void)
{
	char err[PATH_MAX + 16], newfile[PATH_MAX + 32], msg[200] = "";
	pid_t pid, parent = getpid();
	int efd, nfd, status;
	int64_t until;
	struct stat st;
	ssize_t got;

	snprintf(err, sizeof(err), "%s/serve.err", S->dir);
	efd = open(err, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	nfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (efd < 0 || nfd < 0) {
		snprintf(S->why, sizeof(S->why), "%.200s: %s", efd < 0 ? err : "/dev/null", strerror(errno));
		goto fail;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(S->why, sizeof(S->why), "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent || dup2(nfd, 1) < 0 || dup2(efd, 2) < 0)
			_exit(127);
		execl("/proc/self/exe", "faststamp", "serve", "--path", S->path, "--interval-ms",
		      SH_INTERVAL_MS, (char *)NULL);
		_exit(127);
	}
	close(nfd);
	snprintf(newfile, sizeof(newfile), "%s.new.%ld", S->path, (long)pid);
	bench_sg_service(pid, newfile);
	/* It measures the counter's frequency (10 ms) and takes three samples first. */
	until = fts_tool_now(CLOCK_MONOTONIC) + 5000000000;
	while (stat(S->path, &st) < 0) {
		struct timespec ms = { 0, 1000000 };
		if (waitpid(pid, &status, WNOHANG) == pid) {
			got = pread(efd, msg, sizeof(msg) - 1, 0);
			msg[got > 0 ? got : 0] = '\0';
			msg[strcspn(msg, "\n")] = '\0';
			snprintf(S->why, sizeof(S->why), "faststamp serve exited %d: %s",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1, msg);
			bench_sg_service(0, NULL);
			close(efd);
			return -1;
		}
		if (fts_tool_now(CLOCK_MONOTONIC) > until) {
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			bench_sg_service(0, NULL);
			snprintf(S->why, sizeof(S->why), "faststamp serve published nothing in 5 s");
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
			bench_sg_service(0, NULL);
			return -1;
		}
		nanosleep(&ms, NULL);
	}
	bench_sg_service(0, NULL);
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

/* The first conversions: runs of each kind, in turn. 0, or -1 with S->why. */
static int sh_first(int runs)
{
	int64_t v[2][9];
	struct child c;
	char src[16];

	for (int r = 0; r < runs; r++)
		for (int m = SH_OWN; m <= SH_SHARED; m++) {
			double ns, th;
			if (bench_child_start(&c, m == SH_OWN ? "0" : S->path, NULL, 0, 0) < 0 ||
			    bench_child_end(&c, "first-conversion") < 0) {
				snprintf(S->why, sizeof(S->why), "a first-conversion child failed");
				return -1;
			}
			ns = bench_child_num(&c, "first_ns");
			th = bench_child_num(&c, "threads");
			if (!isfinite(ns) || !isfinite(th)) {
				snprintf(S->why, sizeof(S->why), "a first-conversion child said nothing");
				return -1;
			}
			v[m][r] = (int64_t)ns;
			if (!r || th < S->threads[m][0])
				S->threads[m][0] = (int)th;
			if (!r || th > S->threads[m][1])
				S->threads[m][1] = (int)th;
			bench_child_str(&c, "source", src, sizeof(src));
			snprintf(S->source[m], sizeof(S->source[m]), "%s", src);
			if (m == SH_SHARED && strcmp(src, "shared")) {
				S->attached = 0;
				bench_child_str(&c, "note", S->note, sizeof(S->note));
			}
		}
	for (int m = SH_OWN; m <= SH_SHARED; m++) {
		S->first[m][0] = (double)fts_tool_quantile(v[m], (size_t)runs, 0.5);
		S->first[m][1] = (double)fts_tool_quantile(v[m], (size_t)runs, 0.9);
	}
	S->runs = runs;
	return 0;
}

/* The three children of the gaps at once, then their cost rounds. 0, or -1 with S->why. */
static int sh_gaps_run(int quick)
{
	struct child c[SH_ROLES];
	const char *env[SH_ROLES] = { "0", S->path, "0" };
	const struct op *cost[SH_MAXCOST];
	char k[64], src[16];
	size_t ncost;
	int m, rc = -1;

	for (m = 0; m < SH_ROLES; m++)
		c[m].pid = -1, c[m].out = c[m].in = -1;
	for (m = 0; m < SH_ROLES; m++)
		if (bench_child_start(&c[m], env[m], sh_roles[m], quick, 1) < 0)
			goto out;
	/* Each ready (its first conversion done), then one start for all. */
	for (m = 0; m < SH_ROLES; m++)
		if (!bench_child_read(&c[m], "ready\n")) {
			snprintf(S->why, sizeof(S->why), "the %s child of the gaps did not start", sh_roles[m]);
			goto out;
		}
	{
		int64_t start = fts_tool_now(CLOCK_MONOTONIC) + 10000000;
		for (m = 0; m < SH_ROLES; m++) {
			char line[32];
			int len = snprintf(line, sizeof(line), "%lld\n", (long long)start);
			if (write(c[m].in, line, (size_t)len) != len) {
				snprintf(S->why, sizeof(S->why), "the %s child: write: %s", sh_roles[m],
					 strerror(errno));
				goto out;
			}
			close(c[m].in);
			c[m].in = -1;
		}
	}
	for (m = 0; m < SH_ROLES; m++)
		if (bench_child_end(&c[m], sh_roles[m]) < 0) {
			snprintf(S->why, sizeof(S->why), "the %s child of the gaps failed", sh_roles[m]);
			goto out;
		}
	for (m = 0; m < SH_ROLES; m++)
		for (size_t j = 0; j < SH_NGAPS; j++) {
			snprintf(k, sizeof(k), "gap_%s_p50", sh_gaps[j].key);
			S->gap[m][j][0] = bench_child_num(&c[m], k);
			snprintf(k, sizeof(k), "gap_%s_p90", sh_gaps[j].key);
			S->gap[m][j][1] = bench_child_num(&c[m], k);
			if (m != SH_CLOCK) {
				snprintf(k, sizeof(k), "gap_%s_old_p50", sh_gaps[j].key);
				S->gap_old[m][j][0] = bench_child_num(&c[m], k);
				snprintf(k, sizeof(k), "gap_%s_old_p90", sh_gaps[j].key);
				S->gap_old[m][j][1] = bench_child_num(&c[m], k);
			}
			snprintf(k, sizeof(k), "gap_%s_calls", sh_gaps[j].key);
			S->gap_calls[m][j] = isfinite(bench_child_num(&c[m], k)) ? (int)bench_child_num(&c[m], k) : 0;
			snprintf(k, sizeof(k), "gap_%s_missed", sh_gaps[j].key);
			S->gap_missed[m][j] = isfinite(bench_child_num(&c[m], k)) ? (int)bench_child_num(&c[m], k) : 0;
			snprintf(k, sizeof(k), "gap_%s_failed", sh_gaps[j].key);
			if (m != SH_CLOCK && bench_child_num(&c[m], k) > 0)
				S->gap_failed[m] += (int)bench_child_num(&c[m], k);
		}
	ncost = sh_cost_ops(cost);
	for (m = SH_OWN; m <= SH_SHARED; m++) {
		for (size_t o = 0; o < ncost; o++)
			for (int q = 0; q < 3; q++) {
				static const char *const qs[3] = { "p10", "p50", "p90" };
				snprintf(k, sizeof(k), "cost_%s_%s", cost[o]->key, qs[q]);
				S->cost[m][o][q] = bench_child_num(&c[m], k);
			}
		S->inside[m] = bench_child_num(&c[m], "recent_inside") == 1;
		S->old_span_s[m] = bench_child_num(&c[m], "old_span_ns") / 1e9;
		S->anon_first[m] = bench_child_num(&c[m], "anon_first_kib") * 1024;
		S->anon_end[m] = bench_child_num(&c[m], "anon_end_kib") * 1024;
		S->rounds = (int)bench_child_num(&c[m], "rounds");
		bench_child_str(&c[m], "source_end", src, sizeof(src));
		if (m == SH_SHARED && strcmp(src, "shared")) {
			S->attached = 0;
			snprintf(S->source[m], sizeof(S->source[m]), "%s", src);
			bench_child_str(&c[m], "note_end", S->note, sizeof(S->note));
		}
	}
	S->map_rss = bench_child_num(&c[SH_SHARED], "map_rss_kib") * 1024;
	S->map_anon = bench_child_num(&c[SH_SHARED], "map_anon_kib") * 1024;
	rc = 0;
out:
	for (m = 0; m < SH_ROLES; m++)
		bench_child_kill(&c[m]);
	return rc;
}

static int make_dir(char *tmpl, size_t len, const char *base)
{
	snprintf(tmpl, len, "%s/faststamp-bench.XXXXXX", base);
	return mkdtemp(tmpl) ? 0 : -1;
}

/* The section: a service of its own in a private directory, fresh processes converting
 * with it and with their own histories, side by side. S->ran, or S->why. */
void bench_shared_section(int quick)
{
	struct fts_info in = { .size = sizeof(in) };
	int64_t t0 = fts_tool_now(CLOCK_MONOTONIC);
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];
	struct statfs fs;
	pid_t serve;

	S->attached = 1;
	S->serve_status = -1;
	if (fts_get_info(&in) < 0 || !in.counter_hz || !strcmp(in.backend, "generic")) {
		snprintf(S->why, sizeof(S->why), "backend %s: stamps are clock readings, there is "
			 "no calibration to share", in.backend);
		return;
	}
	/* On a tmpfs, as /run/faststamp is, when there is one: the pages of a disk file
	 * system's file fault in slower (a first conversion 50 us against 32 here). Mode
	 * 0700: the service's directory must be ours alone. */
	S->tmpfs = statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC;
	if (!S->tmpfs || make_dir(tmpl, sizeof(tmpl), "/dev/shm") < 0) {
		const char *base = tmp && *tmp ? tmp : "/tmp";
		if (make_dir(tmpl, sizeof(tmpl), base) < 0) {
			snprintf(S->why, sizeof(S->why), "mkdtemp in %.200s: %s", base, strerror(errno));
			return;
		}
		S->tmpfs = statfs(tmpl, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
	}
	bench_sg_arm(tmpl);
	/* The name the kernel shows for the mapping in /proc/PID/smaps */
	if (!realpath(tmpl, S->dir))
		snprintf(S->dir, sizeof(S->dir), "%s", tmpl);
	snprintf(S->path, sizeof(S->path), "%s/clock", S->dir);
	if ((serve = serve_start()) < 0) {
		dir_remove(tmpl);
		bench_sg_disarm();
		return;
	}
	if (sh_first(quick ? 5 : 9) == 0 && sh_gaps_run(quick) == 0) {
		char pid[24];
		long size, rss, anon;
		snprintf(pid, sizeof(pid), "%ld", (long)serve);
		if (map_kib(pid, SHARED_MAP_NAME, &size, &rss, &anon) == 0) {
			S->file_bytes = (double)size * 1024;
			S->pub_rss = (double)rss * 1024;
			S->file_alloc = S->pub_rss;   /* a memfd's pages exist once touched */
		}
		S->ran = 1;
	}
	S->serve_status = serve_stop(serve);
	dir_remove(tmpl);
	bench_sg_disarm();
	S->secs = (double)(fts_tool_now(CLOCK_MONOTONIC) - t0) / 1e9;
}

/* Conversions after a sleep against clock_gettime after the same sleep: the fresh
 * ones' median and p90, the old ones' median. */
#define SH_COLD_P50_RATIO 1.5
#define SH_COLD_P90_RATIO 2.0
#define SH_COLD_OLD_RATIO 1.2
int sh_cold_met(int m, char *why, size_t len)
{
	why[0] = '\0';
	for (size_t j = 0; j < SH_NGAPS; j++) {
		const double *g = S->gap[m][j], *o = S->gap_old[m][j], *c = S->gap[SH_CLOCK][j];
		if (!S->gap_calls[SH_OWN][j])
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
int sh_fresh_met(int m, char *why, size_t len)
{
	for (size_t j = 0; j < SH_NGAPS; j++) {
		const double *g = S->gap[m][j];
		if (!S->gap_calls[m][j])
			continue;
		if (!(g[0] <= SH_FRESH_P50_TARGET_NS) || !(g[1] <= SH_FRESH_P90_TARGET_NS)) {
			snprintf(why, len, " (%s: median %.0f, p90 %.0f)", sh_gaps[j].label, g[0], g[1]);
			return 0;
		}
	}
	why[0] = '\0';
	return 1;
}
