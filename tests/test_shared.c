/* test_shared.c - one calibration for the machine: `faststamp serve` (FTS_TOOL) runs as a
 * process of its own, publishing in a directory this test makes; clients are children
 * of the test, each a fresh process that finds the history at its first conversion.
 *   two_clients_identical      the same stamps, the same ns and bounds, in two
 *                              processes; no thread, no calibration time in either
 *   kill9_storm                the service killed (-9) while conversions run: none
 *                              fails, every bound holds against its bracket, before
 *                              and after the clients leave the shared history
 *   truncate_storm, overwrite_storm, copy_over_storm
 *                              the path truncated, overwritten in place, copied or
 *                              renamed over, and the memory itself truncated and
 *                              written through serve's own fds, over and over while
 *                              two threads convert: no client and no serve dies, no
 *                              conversion fails or leaves its bound, the memory keeps
 *                              its size, and serve puts its socket back and says so
 *   path_taken                 the path become another publisher's socket, or its
 *                              directory writable by others: serve exits 1, saying why
 *   sealed_memory              what a reader receives: read-only, sealed, its size
 *                              and contents beyond the reach of any fd
 *   hostile_files              fake publishers (a test's own socket handing out a copy
 *                              of the genuine memory, patched) and things at the
 *                              path that are not publishers: refused, with the
 *                              reason in fts_info, and no socket or memfd left open
 *   resolution_said            the clocks' resolution serve found, in its header: a
 *                              reader takes it instead of probing, unless it is
 *                              unsaid (an older serve) or out of reason
 *   record_converts_any_process  serve --record: another process's stamps convert from
 *                              the record alone, each within its bound
 *   one_publisher              a second publisher at the same path is refused; SIGINT
 *                              stops the first cleanly, and its socket goes with it
 *   wrongly_owned_file         a publisher of another user: refused (needs root)
 *   service_user_trusted       a publisher of the service's user: trusted by another
 *                              user's reader when /etc/passwd names it (not NSS),
 *                              refused when it names another uid (needs root)
 *   flood_one_user             one user's thousands of connections that never read
 *                              their answers, to a serve run as its unit runs it (no
 *                              capability, 1024 open files): root and other users
 *                              still get the history, and that user's share of
 *                              unread answers is bounded (needs root)
 *   publisher_and_readers      in one process, the publishing sampler and threads
 *                              converting (what ThreadSanitizer can see)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "testmain.h"

#include "bracket.h"
#include "faststamp/config.h"
#include "faststamp.h"
#include "internal.h"
#include "shared.h"
#include "clock.h"
#include "history.h"

static char dir[64], path[128];
static int serve_as_unit;   /* serve as the unit runs it: no capability, 1024 open files */
static uid_t attach_as;     /* attach_in_child converts as this user (0: the test's) */
static const char *etc_as;  /* and with these passwd and nsswitch.conf over /etc's */

/* The command under test: the build's (FTS_TOOL), or a copy named by FTS_TEST_TOOL
 * where the build tree is out of the test user's reach (scripts/stages/10-build-test.sh
 * runs this test as uid 65534 from a copy). */
static const char *tool(void)
{
	const char *t = getenv("FTS_TEST_TOOL");
	return t && *t ? t : FTS_TOOL;
}

static int64_t mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

/* The service, in a fresh directory: its pid, once the file is there; with --record
 * record when not NULL. */
static pid_t serve_rec(int interval_ms, const char *record)
{
	char iv[16];
	const char *cmd = tool();
	pid_t pid;

	snprintf(dir, sizeof(dir), "/tmp/fts-shared.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/clock", dir);
	snprintf(iv, sizeof(iv), "%d", interval_ms);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY), err;
		char ef[160];
		prctl(PR_SET_PDEATHSIG, SIGKILL);   /* a failed test leaves no service behind */
		if (serve_as_unit) {
			struct rlimit r = { 1024, 1024 };   /* systemd's default soft limit */
			for (int cap = 0; prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0; cap++)
				;   /* root without a capability: an exec gets none */
			if (setrlimit(RLIMIT_NOFILE, &r) < 0)
				_exit(126);
		}
		dup2(null, 1);
		snprintf(ef, sizeof(ef), "%s/serve.err", dir);
		if ((err = open(ef, O_WRONLY | O_CREAT | O_APPEND, 0644)) >= 0)
			dup2(err, 2);
		if (record)
			execl(cmd, cmd, "serve", "--path", path, "--interval-ms", iv,
			      "--record", record, (char *)NULL);
		else
			execl(cmd, cmd, "serve", "--path", path, "--interval-ms", iv,
			      (char *)NULL);
		_exit(127);
	}
	/* up to 15 s: the first calibration's warp test, under a sanitizer on a loaded
	 * machine, takes seconds */
	for (int i = 0; i < 1500 && access(path, F_OK) < 0; i++)
		sleep_ms(10);
	assert_int_equal(access(path, F_OK), 0);
	return pid;
}

static pid_t serve(int interval_ms)
{
	return serve_rec(interval_ms, NULL);
}

static void unserve(pid_t pid)
{
	char f[160];
	int st;

	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	snprintf(f, sizeof(f), "%s/clock", dir);
	unlink(f);
	snprintf(f, sizeof(f), "%s/clock.lock", dir);
	unlink(f);
	snprintf(f, sizeof(f), "%s/serve.err", dir);
	unlink(f);
	rmdir(dir);
}

/* What serve said on stderr. */
static void serve_said(char *buf, size_t len)
{
	char f[160];
	int fd;
	ssize_t n = 0;

	snprintf(f, sizeof(f), "%s/serve.err", dir);
	if ((fd = open(f, O_RDONLY)) >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
}

static void attach_in_child(const char *file, char *source, char *note);

/* Wait up to 5 s until the history published holds a sample taken at least
 * after counter value c, then for later more: 1, or 0 if it never did. */
static int published_past(uint64_t c, int later)
{
	char why[240];
	int fd = fts__shared_fetch(path, why, sizeof(why)), ok = 0;
	struct stat st;
	void *map;

	if (fd < 0 || fstat(fd, &st) < 0)
		return 0;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return 0;
	if (fts__shared_check(map, (size_t)st.st_size, why, sizeof(why)) == 0) {
		struct fts_calib view;
		fts__shared_view(&view, map, map, 0);
		for (int i = 0; i < 500 && later >= 0; i++) {
			if (fts__calib_newest_counter(&view) > c) {
				c = fts__calib_newest_counter(&view);
				later--;
				continue;
			}
			sleep_ms(10);
		}
		ok = later < 0;
	}
	munmap(map, (size_t)st.st_size);
	return ok;
}

/* Threads of this process, from /proc. */
static int threads(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Threads:", 8))
			n = atoi(line + 8);
	if (f)
		fclose(f);
	return n;
}

/* KiB of the shared history's memory resident in this process's mappings of it (what
 * its reads have mapped), from /proc. */
static long shm_rss_kib(void)
{
	char line[512];
	long kib = 0, v;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') && strchr(line, '-') < strchr(line, ' '))
			in = strstr(line, "memfd:faststamp-history") != NULL;   /* a mapping's line */
		else if (in && sscanf(line, "Rss: %ld kB", &v) == 1)
			kib += v;
	}
	if (f)
		fclose(f);
	return kib;
}

/* Run fn in a fresh child (its process clock untouched by the test's): it passes when
 * fn returns 0. */
static void in_child(int (*fn)(void))
{
	pid_t p;
	int st;

	fflush(stdout);
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		int rc = fn();
		fflush(stdout);
		_exit(rc);
	}
	waitpid(p, &st, 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- two processes, the same answers ----------------------------------------------- */

#define N 2000

struct answers {
	int64_t ns[N], err[N];
	char source[16];
	int threads;        /* threads the conversions started */
	long shm_kib;       /* the shared memory the first conversion mapped in, KiB */
	int64_t first_ns;   /* the first conversion's cost */
	uint64_t state[2];  /* the history's newest sample before and after converting */
};

static void client(const fast_timestamp_t *st, struct answers *a)
{
	int64_t t0 = mono();
	struct fts_info in = { .size = sizeof(in) };
	int before = threads();   /* a sanitizer's own thread counts too */
	long kib = shm_rss_kib();

	setenv("FASTSTAMP_SHARED", path, 1);
	assert_int_equal(fts_convert(&st[0], &a->ns[0], &a->err[0]), 0);
	a->first_ns = mono() - t0;
	a->shm_kib = shm_rss_kib() - kib;
	a->state[0] = fts__calib_newest_counter(fts__clock_history(FTS__CLK_REALTIME));
	assert_int_equal(fts_convert_array(st, N, a->ns, a->err), 0);
	a->state[1] = fts__calib_newest_counter(fts__clock_history(FTS__CLK_REALTIME));
	assert_int_equal(fts_get_info(&in), 0);
	snprintf(a->source, sizeof(a->source), "%s", in.history_source);
	a->threads = threads() - before;
}

static void two_clients_identical(void **state)
{
	static fast_timestamp_t st[N];
	static struct fts__sbracket br[N];
	struct answers *a[2];
	pid_t svc = serve(250);   /* a sample seldom falls between the two clients */
	(void)state;

	for (int i = 0; i < N; i++) {
		fts__sbracket_take(&br[i]);
		st[i] = br[i].s;
		if (i % 100 == 0)
			sleep_ms(1);
	}
	/* samples after the last stamp: all inside the history (a loaded machine, or a
	 * sanitizer, may delay serve's sampler past any fixed wait) */
	assert_true(published_past(st[N - 1] & ~FTS_STAMP_CLOCK_TAG, 3));
	/* The same published state gives the same answers; a sample published between the
	 * two clients (a sanitizer's, or a loaded machine's, slow client) may refit the run
	 * of segments the stamps lie in: then the two clients run again. */
	for (int round = 0; round < 5; round++) {
	for (int k = 0; k < 2; k++) {
		int fd[2];
		pid_t p;
		a[k] = calloc(1, sizeof(*a[k]));
		assert_int_equal(pipe(fd), 0);
		p = fork();
		if (p == 0) {
			struct answers r;
			client(st, &r);
			write(fd[1], &r, sizeof(r)) == sizeof(r) ? _exit(0) : _exit(1);
		}
		close(fd[1]);
		size_t got = 0;
		while (got < sizeof(*a[k])) {
			ssize_t r = read(fd[0], (char *)a[k] + got, sizeof(*a[k]) - got);
			assert_true(r > 0);
			got += (size_t)r;
		}
		close(fd[0]);
		int status;
		waitpid(p, &status, 0);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	if (a[0]->state[0] == a[0]->state[1] && a[0]->state[1] == a[1]->state[0] &&
	    a[1]->state[0] == a[1]->state[1])
		break;
	print_message("two clients: a sample was published between them; again\n");
	free(a[0]);
	free(a[1]);
	a[0] = a[1] = NULL;
	}
	assert_non_null(a[0]);   /* one round found both clients on one state */
	unserve(svc);
	size_t same = 0, covered = 0;
	for (int i = 0; i < N; i++) {
		same += a[0]->ns[i] == a[1]->ns[i] && a[0]->err[i] == a[1]->err[i];
		covered += fts__sbracket_miss(&br[i], a[0]->ns[i]) <= a[0]->err[i];
	}
	print_message("two clients: %s and %s histories, %d and %d threads started, first conversions "
		      "%lld and %lld us; %zu of %d stamps the same ns and bound, %zu covered\n",
		      a[0]->source, a[1]->source, a[0]->threads, a[1]->threads,
		      (long long)a[0]->first_ns / 1000, (long long)a[1]->first_ns / 1000, same, N,
		      covered);
	assert_string_equal(a[0]->source, "shared");
	assert_string_equal(a[1]->source, "shared");
	assert_int_equal(a[0]->threads, 0);   /* no sampler thread of its own */
	assert_int_equal(a[1]->threads, 0);
	/* Attaching maps the 128 MiB and reads only what the first conversion needs: the
	 * header, the latch, a directory entry, a chunk (each fault maps at most 64 KiB
	 * around it), not a page of every part of the region. */
	print_message("two clients: the first conversion mapped in %ld and %ld KiB of the shared "
		      "memory\n", a[0]->shm_kib, a[1]->shm_kib);
	assert_true(a[0]->shm_kib > 0 && a[0]->shm_kib <= 256);
	assert_true(a[1]->shm_kib > 0 && a[1]->shm_kib <= 256);
	assert_int_equal(same, N);
	assert_int_equal(covered, N);
	free(a[0]);
	free(a[1]);
}

/* ---- every clock through the shared history -------------------------------------- */

/* In a fresh process attached to serve: stamps bracketed by each clock's own reads,
 * converted at once (past the newest sample: a read of that clock) and once serve has
 * published samples after them (inside its history of that clock). Every bound covers
 * its bracket; the process takes no thread of its own. */
static int every_clock_child(void)
{
	static const clockid_t ids[] = { CLOCK_REALTIME, CLOCK_TAI, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
					 CLOCK_MONOTONIC_RAW };
	enum { M = 500 };
	static struct fts__sbracket b[5][M];
	struct fts_info in = { .size = sizeof(in) };
	int before = threads(), bad = 0;
	fast_timestamp_t last = 0;

	setenv("FASTSTAMP_SHARED", path, 1);
	for (int late = 0; late < 2; late++) {
		for (int k = 0; k < 5; k++) {
			for (int i = 0; i < M; i++) {
				struct timespec t0, t1;
				int64_t ns, err;
				clock_gettime(ids[k], &t0);
				store_fast_timestamp(&b[k][i].s);
				clock_gettime(ids[k], &t1);
				b[k][i].t0 = (int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec;
				b[k][i].t1 = (int64_t)t1.tv_sec * 1000000000 + t1.tv_nsec;
				last = b[k][i].s;
				if (late)
					continue;
				if (fts_convert_clock(&b[k][i].s, ids[k], &ns, &err) < 0 ||
				    fts__sbracket_miss(&b[k][i], ns) > err) {
					if (bad++ < 5)
						printf("clock %d at once: stamp %d not covered\n", (int)ids[k], i);
				}
			}
		}
		if (!late)
			continue;
		if (!published_past(last & ~FTS_STAMP_CLOCK_TAG, 2)) {
			printf("serve published no sample after the stamps\n");
			return 1;
		}
		for (int k = 0; k < 5; k++) {
			for (int i = 0; i < M; i++) {
				int64_t ns, err;
				if (fts_convert_clock(&b[k][i].s, ids[k], &ns, &err) < 0 ||
				    fts__sbracket_miss(&b[k][i], ns) > err) {
					if (bad++ < 5)
						printf("clock %d late: stamp %d not covered\n", (int)ids[k], i);
				}
			}
		}
	}
	if (fts_get_info(&in) < 0 || strcmp(in.history_source, "shared")) {
		printf("not attached: %s %s\n", in.history_source, in.history_note);
		return 1;
	}
	printf("every clock through the shared history: %d of %d stamps not covered, %d threads "
	       "started\n", bad, 2 * 5 * M, threads() - before);
	return bad || threads() != before;
}

static void every_clock_shared(void **state)
{
	pid_t svc = serve(100);
	(void)state;
	in_child(every_clock_child);
	unserve(svc);
}

/* ---- the service killed under a storm of conversions ------------------------------ */

#define KEEP 20000
static struct fts__sbracket kept[KEEP];
static size_t nkept;
static volatile int storm_stop;

struct storm {
	size_t conversions, failed, uncovered;
	int why;   /* the last failure's errno */
};

static void *storm(void *arg)
{
	struct storm *s = arg;
	while (!__atomic_load_n(&storm_stop, __ATOMIC_RELAXED)) {
		struct fts__sbracket b;
		int64_t ns, err;
		fts__sbracket_take(&b);
		if (fts_convert(&b.s, &ns, &err) < 0) {
			s->failed++;
			s->why = errno;
			continue;
		}
		s->conversions++;
		s->uncovered += fts__sbracket_miss(&b, ns) > err;
		size_t k = __atomic_fetch_add(&nkept, 1, __ATOMIC_RELAXED);
		if (k < KEEP && k % 7 == 0)
			kept[k] = b;
		else if (k >= KEEP)
			__atomic_store_n(&nkept, KEEP, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int kill9_child(void)
{
	struct storm s[2] = { { 0 }, { 0 } };
	struct fts_info in = { .size = sizeof(in) };
	char before[16];
	pthread_t t[2];
	pid_t svc = serve(10);
	size_t uncovered = 0, n;
	int st;

	setenv("FASTSTAMP_SHARED", path, 1);
	if (fts_clock_start() < 0 || fts_get_info(&in) < 0)
		return 1;
	snprintf(before, sizeof(before), "%s", in.history_source);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, storm, &s[i]);
	sleep_ms(500);
	kill(svc, SIGKILL);   /* in the middle of the storm */
	waitpid(svc, &st, 0);
	sleep_ms(2000);       /* the heartbeat goes stale after 1 s */
	__atomic_store_n(&storm_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	fts_get_info(&in);
	/* every stamp kept, converted again: those taken while the service ran convert
	 * from the copy of its history */
	n = nkept < KEEP ? nkept : KEEP;
	size_t checked = 0;
	for (size_t i = 0; i < n; i += 7) {
		int64_t ns, err;
		if (!kept[i].s)
			continue;
		if (fts_convert(&kept[i].s, &ns, &err) < 0)
			return 1;
		uncovered += fts__sbracket_miss(&kept[i], ns) > err;
		checked++;
	}
	printf("kill -9 in a storm: %zu conversions, %zu failed (%s), %zu uncovered; %zu kept "
	       "stamps again: %zu uncovered; history %s before, %s after (%s)\n",
	       s[0].conversions + s[1].conversions, s[0].failed + s[1].failed,
	       s[0].why || s[1].why ? strerror(s[0].why ? s[0].why : s[1].why) : "none",
	       s[0].uncovered + s[1].uncovered, checked, uncovered, before, in.history_source,
	       in.history_note);
	unserve(svc);
	return strcmp(before, "shared") || strcmp(in.history_source, "process") ||
	       !strstr(in.history_note, "heartbeat") || s[0].failed + s[1].failed ||
	       s[0].uncovered + s[1].uncovered || uncovered || checked < 100;
}

static void kill9_storm(void **state)
{
	(void)state;
	in_child(kill9_child);
}

/* ---- the path and the memory under careless and hostile hands --------------------- */

/* The genuine memory, as serve hands it out: its fd (read-only), *n its size. */
static int genuine(size_t *n)
{
	char why[240];
	struct stat st;
	int fd = fts__shared_fetch(path, why, sizeof(why));

	if (fd < 0)
		print_message("fetch: %s\n", why);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	*n = (size_t)st.st_size;
	return fd;
}

/* n bytes of from into to (both at 0), the holes left holes: the memory is large and
 * mostly never touched. */
static void copy_sparse(int from, int to, size_t n)
{
	static char buf[1 << 16];
	off_t at = 0, hole;

	assert_int_equal(ftruncate(to, (off_t)n), 0);
	while ((at = lseek(from, at, SEEK_DATA)) >= 0 && (size_t)at < n) {
		hole = lseek(from, at, SEEK_HOLE);
		if (hole < 0 || (size_t)hole > n)
			hole = (off_t)n;
		while (at < hole) {
			size_t k = (size_t)(hole - at) < sizeof(buf) ? (size_t)(hole - at) : sizeof(buf);
			ssize_t r = pread(from, buf, k, at);
			assert_true(r > 0);
			assert_int_equal(pwrite(to, buf, (size_t)r, at), r);
			at += r;
		}
	}
}

/* serve's own fds of its memory (/proc/PID/fd), up to 8: how many. */
static int serve_memfds(pid_t svc, int *fds, int flags)
{
	char d[64], l[128], f[400];
	struct dirent *e;
	int n = 0;
	DIR *dp;

	snprintf(d, sizeof(d), "/proc/%d/fd", (int)svc);
	if (!(dp = opendir(d)))
		return 0;
	while ((e = readdir(dp)) && n < 8) {
		ssize_t k;
		snprintf(f, sizeof(f), "%s/%s", d, e->d_name);
		if ((k = readlink(f, l, sizeof(l) - 1)) <= 0)
			continue;
		l[k] = '\0';
		if (strstr(l, "memfd:faststamp") && (fds[n] = open(f, flags)) >= 0)
			n++;
	}
	closedir(dp);
	return n;
}

enum storm_kind { TRUNCATE, OVERWRITE, COPY_OVER };
static enum storm_kind storm_kind;

struct harm {
	size_t tries, done;   /* actions on the memory tried, and done (must be none) */
	size_t at_path;       /* actions at the path that took */
};

/* One round of harm: at the path, and on the memory through serve's own fds. */
static void harm(pid_t svc, const char *other, struct harm *h)
{
	static char junk[1 << 16];
	int fds[8], n, fd;

	memset(junk, 0xa5, sizeof(junk));
	switch (storm_kind) {
	case TRUNCATE:
		h->at_path += truncate(path, 0) == 0;
		n = serve_memfds(svc, fds, O_RDWR);
		for (int i = 0; i < n; i++) {
			h->tries++;
			h->done += ftruncate(fds[i], 0) == 0;
			h->tries++;
			h->done += ftruncate(fds[i], 4096) == 0;
			close(fds[i]);
		}
		break;
	case OVERWRITE:
		if ((fd = open(path, O_WRONLY)) >= 0) {
			h->at_path += pwrite(fd, junk, sizeof(junk), 0) > 0;
			close(fd);
		}
		n = serve_memfds(svc, fds, O_RDWR);
		for (int i = 0; i < n; i++) {
			void *m;
			h->tries++;
			h->done += pwrite(fds[i], junk, sizeof(junk), 0) > 0;
			h->tries++;
			m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
			h->done += m != MAP_FAILED;
			if (m != MAP_FAILED)
				munmap(m, 4096);
			close(fds[i]);
		}
		break;
	case COPY_OVER: {
		char cmd[400], moved[160];
		/* cp -f: the path cannot be opened for writing, so cp removes it and makes
		 * a regular file of the genuine memory's bytes; then a rename over it */
		snprintf(cmd, sizeof(cmd), "cp -f %s %s 2>/dev/null", other, path);
		h->at_path += system(cmd) == 0;
		sleep_ms(30);
		snprintf(moved, sizeof(moved), "%s/moved", dir);
		snprintf(cmd, sizeof(cmd), "cp %s %s", other, moved);
		if (system(cmd) == 0)
			h->at_path += rename(moved, path) == 0;
		break;
	}
	}
}

static int storm_child(void)
{
	struct storm s[2] = { { 0 }, { 0 } };
	struct fts_info in = { .size = sizeof(in) };
	struct harm h = { 0, 0, 0 };
	char before[16], other[160], said[4096], source[16], note[240];
	size_t len;
	pthread_t t[2];
	pid_t svc = serve(10);
	struct stat st;
	int64_t end;
	int fd, g, alive, rc = 0;

	setenv("FASTSTAMP_SHARED", path, 1);
	if (fts_clock_start() < 0 || fts_get_info(&in) < 0)
		return 1;
	snprintf(before, sizeof(before), "%s", in.history_source);
	g = genuine(&len);
	snprintf(other, sizeof(other), "%s/other", dir);
	fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	copy_sparse(g, fd, 1 << 16);   /* its header and first chunks: copied fast */
	close(fd);
	close(g);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, storm, &s[i]);
	end = mono() + 1500000000;
	while (mono() < end) {
		harm(svc, other, &h);
		sleep_ms(5);
	}
	alive = waitpid(svc, NULL, WNOHANG) == 0;
	sleep_ms(300);   /* serve's watch: 100 ms */
	__atomic_store_n(&storm_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	fts_get_info(&in);
	/* its memory kept its size; a new client finds the history */
	close(genuine(&len));
	attach_in_child(path, source, note);
	serve_said(said, sizeof(said));
	printf("%s storm: %zu conversions, %zu failed (%s), %zu uncovered; %zu actions at the "
	       "path took, %zu of %zu on the memory; serve %s; history %s before, %s after (%s); "
	       "a new client: %s (%s); memory %zu bytes; serve said: %s\n",
	       storm_kind == TRUNCATE ? "truncate" : storm_kind == OVERWRITE ? "overwrite" : "copy-over",
	       s[0].conversions + s[1].conversions, s[0].failed + s[1].failed,
	       s[0].why || s[1].why ? strerror(s[0].why ? s[0].why : s[1].why) : "none",
	       s[0].uncovered + s[1].uncovered, h.at_path, h.done, h.tries,
	       alive ? "alive" : "dead", before, in.history_source, in.history_note, source, note,
	       len, said);
	/* The history is left for one reason only: a loaded machine starved serve's sampler
	 * past the heartbeat's 1 s (the rule kill9_storm tests); nothing done at the path
	 * is a reason. */
	rc |= !alive || strcmp(before, "shared") ||
	      (strcmp(in.history_source, "shared") && !strstr(in.history_note, "heartbeat")) ||
	      s[0].failed + s[1].failed || s[0].uncovered + s[1].uncovered || h.done ||
	      (strcmp(source, "shared") && !strstr(note, "heartbeat")) || lstat(path, &st) < 0 ||
	      !S_ISSOCK(st.st_mode);
	if (storm_kind == COPY_OVER)   /* serve noticed, and said so */
		rc |= !h.at_path || !strstr(said, "was replaced by a regular file: published there again");
	else   /* nothing took at the path (a socket), nothing to say */
		rc |= h.at_path || strstr(said, "again") != NULL || h.tries == 0;
	unlink(other);
	kill(svc, SIGTERM);
	waitpid(svc, &fd, 0);
	rc |= !WIFEXITED(fd) || WEXITSTATUS(fd) != 0;   /* and it stops cleanly */
	unserve(svc);
	return rc;
}

static void truncate_storm(void **state)
{
	(void)state;
	storm_kind = TRUNCATE;
	in_child(storm_child);
}

static void overwrite_storm(void **state)
{
	(void)state;
	storm_kind = OVERWRITE;
	in_child(storm_child);
}

static void copy_over_storm(void **state)
{
	(void)state;
	storm_kind = COPY_OVER;
	in_child(storm_child);
}

/* What a reader receives cannot be changed through it, nor through serve's own fds. */
static void sealed_memory(void **state)
{
	pid_t svc = serve(20);
	char why[240], junk[64] = { 1 };
	struct stat st, after;
	int fd, fds[8], n;
	(void)state;

	fd = fts__shared_fetch(path, why, sizeof(why));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(fcntl(fd, F_GETFL) >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY);
	assert_true(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK);
	assert_int_equal(ftruncate(fd, 0), -1);
	assert_true(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	n = serve_memfds(svc, fds, O_RDWR);
	assert_true(n >= 1);
	for (int i = 0; i < n; i++) {
		assert_int_equal(ftruncate(fds[i], 0), -1);
		assert_int_equal(errno, EPERM);
		assert_int_equal(pwrite(fds[i], junk, sizeof(junk), 0), -1);
		assert_int_equal(errno, EPERM);
		assert_int_equal(fcntl(fds[i], F_ADD_SEALS, F_SEAL_WRITE), -1);   /* F_SEAL_SEAL */
		close(fds[i]);
	}
	assert_int_equal(fstat(fd, &after), 0);
	assert_int_equal(after.st_size, st.st_size);
	print_message("  the memory: %lld bytes, seals 0x%x, read-only to readers\n",
		      (long long)st.st_size, fcntl(fd, F_GET_SEALS));
	close(fd);
	unserve(svc);
}

/* ---- publishers a reader refuses -------------------------------------------------- */

/* In a fresh process: the history its first conversion uses, and why. */
/* This process's fds that are sockets or memfds: what asking a publisher could leave. */
static int held_fds(void)
{
	char f[300], l[128];
	struct dirent *e;
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	while (d && (e = readdir(d))) {
		ssize_t k;
		snprintf(f, sizeof(f), "/proc/self/fd/%s", e->d_name);
		if ((k = readlink(f, l, sizeof(l) - 1)) <= 0)
			continue;
		l[k] = '\0';
		n += !strncmp(l, "socket:", 7) || !strncmp(l, "/memfd:", 7);
	}
	if (d)
		closedir(d);
	return n;
}

static void write_text(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* In a mount namespace of this process's own: the passwd and nsswitch.conf in dir over
 * /etc's (the machine's files untouched). 0, or -1. */
static int over_etc(const char *etc)
{
	char f[160];

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	snprintf(f, sizeof(f), "%s/passwd", etc);
	if (mount(f, "/etc/passwd", NULL, MS_BIND, NULL) < 0)
		return -1;
	snprintf(f, sizeof(f), "%s/nsswitch.conf", etc);
	return mount(f, "/etc/nsswitch.conf", NULL, MS_BIND, NULL);
}

/* What fts_get_info says in a child after its first conversion, looking at file. */
static void attach_info(const char *file, struct fts_info *out)
{
	struct fts_info in = { .size = sizeof(in) };
	int fd[2], st;
	pid_t p;

	assert_int_equal(pipe(fd), 0);
	p = fork();
	if (p == 0) {
		fast_timestamp_t s;
		int64_t ns, err;
		int before = held_fds();
		if (etc_as && over_etc(etc_as) < 0)
			_exit(5);
		if (attach_as && (setgroups(0, NULL) < 0 || setgid(attach_as) < 0 ||
				  setuid(attach_as) < 0))
			_exit(4);
		setenv("FASTSTAMP_SHARED", file, 1);
		store_fast_timestamp(&s);
		if (fts_convert(&s, &ns, &err) < 0 || fts_get_info(&in) < 0)
			_exit(1);
		if (write(fd[1], &in, sizeof(in)) != sizeof(in))
			_exit(1);
		_exit(held_fds() != before ? 3 : 0);   /* the answer's fds all closed */
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], &in, sizeof(in)), sizeof(in));
	close(fd[0]);
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	*out = in;
}

static void attach_in_child(const char *file, char *source, char *note)
{
	struct fts_info in;

	attach_info(file, &in);
	strcpy(source, in.history_source);
	strcpy(note, in.history_note);
}

static void expect_refused(const char *file, const char *why)
{
	char source[16], note[240];
	attach_in_child(file, source, note);
	print_message("  %-36s -> %s: %s\n", why, source, note);
	assert_string_equal(source, "process");
	assert_non_null(strstr(note, why));
}

/* Memory holding n bytes of the genuine memory g (patched: n2 bytes of p2 at off),
 * sealed with seals. */
static int memory(int g, size_t n, size_t off, const void *p2, size_t n2, int seals)
{
	int fd = memfd_create("fake", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_true(fd >= 0);
	copy_sparse(g, fd, n);
	if (n2)
		assert_int_equal(pwrite(fd, p2, n2, (off_t)off), (ssize_t)n2);
	if (seals)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

#define SEALED (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE)
enum fake { HANDS_OUT, SILENT, NO_FD, AS_NOBODY, AS_SERVICE };
#define SERVICE_UID 4545   /* the service's user, in service_user_trusted's passwd */

/* A fake publisher at sock handing out memfd (-1: none) as how says, until killed. */
static pid_t fake_serve(const char *sock, int memfd, enum fake how)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int l, ready[2];
	char c;
	pid_t p;

	assert_true(strlen(sock) < sizeof(a.sun_path));
	memcpy(a.sun_path, sock, strlen(sock));
	unlink(sock);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	chmod(sock, 0666);
	assert_int_equal(pipe(ready), 0);
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		/* the peer's credentials are those at listen(); a change of them clears the
		 * parent-death signal, so it is set after */
		uid_t as = how == AS_NOBODY ? 65534 : how == AS_SERVICE ? SERVICE_UID : 0;
		if (as && (setgid(as) < 0 || setuid(as) < 0))
			_exit(1);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);   /* the test died before the signal was set */
		if (listen(l, 16) < 0)
			_exit(1);
		write(ready[1], "r", 1);
		for (;;) {
			int conn = accept(l, NULL, NULL);
			char byte = 'F', ctl[CMSG_SPACE(sizeof(int))] = { 0 };
			struct iovec iov = { &byte, 1 };
			struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
			if (conn < 0)
				continue;
			if (how == SILENT) {
				sleep_ms(2000);
			} else {
				if (how != NO_FD && memfd >= 0) {
					struct cmsghdr *cm;
					m.msg_control = ctl;
					m.msg_controllen = sizeof(ctl);
					cm = CMSG_FIRSTHDR(&m);
					cm->cmsg_level = SOL_SOCKET;
					cm->cmsg_type = SCM_RIGHTS;
					cm->cmsg_len = CMSG_LEN(sizeof(int));
					memcpy(CMSG_DATA(cm), &memfd, sizeof(int));
				}
				sendmsg(conn, &m, MSG_NOSIGNAL);
			}
			close(conn);
		}
	}
	close(l);
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return p;
}

/* A fake publisher handing out memfd (closed here) is refused for why. */
static void expect_fake_refused(int memfd, enum fake how, const char *why)
{
	char f[160];
	pid_t p;

	snprintf(f, sizeof(f), "%s/fake", dir);
	p = fake_serve(f, memfd, how);
	if (memfd >= 0)
		close(memfd);
	expect_refused(f, why);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	unlink(f);
}

/* The path taken by another socket (a second publisher, its lock removed): serve
 * leaves it, and exits 1 saying why; its directory made writable by others: the same. */
static void path_taken(void **state)
{
	char said[4096], f[160];
	pid_t svc, fake;
	int st, fd;
	size_t n;
	(void)state;

	svc = serve(20);
	fd = genuine(&n);
	snprintf(f, sizeof(f), "%s/clock", dir);
	fake = fake_serve(f, fd, HANDS_OUT);   /* binds over the path */
	close(fd);
	for (int i = 0; i < 300 && waitpid(svc, &st, WNOHANG) == 0; i++)
		sleep_ms(10);
	serve_said(said, sizeof(said));
	print_message("  another socket at the path: serve %s %d; said: %s",
		      WIFEXITED(st) ? "exit" : "still running or killed", WEXITSTATUS(st), said);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_non_null(strstr(said, "was replaced by another socket (another publisher?)"));
	kill(fake, SIGKILL);
	waitpid(fake, NULL, 0);
	unserve(svc);

	svc = serve(20);
	unlink(path);
	assert_int_equal(chmod(dir, 0777), 0);
	for (int i = 0; i < 300 && waitpid(svc, &st, WNOHANG) == 0; i++)
		sleep_ms(10);
	serve_said(said, sizeof(said));
	print_message("  its directory made writable by others: serve exit %d; said: %s",
		      WEXITSTATUS(st), said);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_non_null(strstr(said, "writable by its group or others"));
	unserve(svc);
}

static void hostile_files(void **state)
{
	pid_t svc = serve(20);
	char f[160], source[16], note[240];
	uint32_t v;
	size_t n;
	int64_t t0;
	int fd, g;
	(void)state;

	/* the genuine publisher first: used; and a fake one handing out an exact copy of
	 * its memory, while the genuine one beats: used too (the fake's rules are right) */
	attach_in_child(path, source, note);
	assert_string_equal(source, "shared");
	g = genuine(&n);
	snprintf(f, sizeof(f), "%s/fake", dir);
	pid_t fp = fake_serve(f, memory(g, n, 0, NULL, 0, SEALED), HANDS_OUT);
	attach_in_child(f, source, note);
	print_message("  %-36s -> %s: %s\n", "an exact copy, fresh", source, note);
	assert_string_equal(source, "shared");
	kill(fp, SIGKILL);
	waitpid(fp, NULL, 0);
	unlink(f);
	/* the memory's contents */
	expect_fake_refused(memory(g, n, 0, "NOTFTSHM", 8, SEALED), HANDS_OUT,
			    "not a faststamp shared history");
	v = 99;
	expect_fake_refused(memory(g, n, offsetof(struct fts__shm_head, version), &v, 4, SEALED),
			    HANDS_OUT, "a version of the shared history");
	expect_fake_refused(memory(g, n - 4096, 0, NULL, 0, SEALED), HANDS_OUT,
			    "does not match its size");
	expect_fake_refused(memory(g, 100, 0, NULL, 0, SEALED), HANDS_OUT, "too short");
	expect_fake_refused(memory(g, n, offsetof(struct fts__shm_head, boot_id),
				   "0123456789abcdef", 16, SEALED), HANDS_OUT, "another boot");
	expect_fake_refused(memory(g, n, offsetof(struct fts__shm_head, clocksource), "hpet", 5,
				   SEALED), HANDS_OUT, "its clocksource is hpet");
	v = FTS__SHM_STOPPED;
	expect_fake_refused(memory(g, n, offsetof(struct fts__shm_head, state), &v, 4, SEALED),
			    HANDS_OUT, "its publisher stopped");
	/* the memory's seals: one that could shrink could fault its readers' mappings */
	expect_fake_refused(memory(g, n, 0, NULL, 0, 0), HANDS_OUT,
			    "not sealed against shrinking and growing");
	expect_fake_refused(memory(g, n, 0, NULL, 0, F_SEAL_GROW | F_SEAL_FUTURE_WRITE),
			    HANDS_OUT, "not sealed against shrinking and growing");
	expect_fake_refused(memory(g, n, 0, NULL, 0, F_SEAL_SHRINK | F_SEAL_GROW), HANDS_OUT,
			    "not sealed against writing");
	/* a regular file handed out: the old design's file, which anyone may truncate */
	snprintf(f, sizeof(f), "%s/regular", dir);
	fd = open(f, O_RDWR | O_CREAT | O_TRUNC, 0644);
	copy_sparse(g, fd, n);
	expect_fake_refused(fd, HANDS_OUT, "(not a memfd)");
	/* the answer */
	expect_fake_refused(-1, NO_FD, "its answer held no history's memory");
	t0 = mono();
	expect_fake_refused(memory(g, n, 0, NULL, 0, SEALED), SILENT, "did not answer within 100 ms");
	print_message("  (a silent publisher cost %lld ms)\n", (long long)(mono() - t0) / 1000000);
	assert_true(mono() - t0 < 1500000000LL);   /* the child: fork, 100 ms, exit */
	/* a copy no one beats for */
	fd = memory(g, n, 0, NULL, 0, SEALED);
	sleep_ms(1200);
	expect_fake_refused(fd, HANDS_OUT, "heartbeat is over 1 s old");
	/* what is at the path: the genuine memory's bytes in a regular file (what `cp`
	 * leaves), nothing, a symbolic link to the genuine socket, a dead socket */
	snprintf(f, sizeof(f), "%s/copy", dir);
	fd = open(f, O_RDWR | O_CREAT | O_TRUNC, 0644);
	copy_sparse(g, fd, n);
	close(fd);
	expect_refused(f, "not a socket");
	unlink(f);
	expect_refused(f, "No such file or directory");
	assert_int_equal(symlink(path, f), 0);
	expect_refused(f, "a symbolic link (not followed)");
	unlink(f);
	{
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int l = socket(AF_UNIX, SOCK_STREAM, 0);
		assert_true(strlen(f) < sizeof(a.sun_path));
		memcpy(a.sun_path, f, strlen(f));
		assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
		close(l);   /* what a publisher killed with -9 leaves */
		expect_refused(f, "no publisher listens there");
		unlink(f);
	}
	close(g);
	unserve(svc);
}

/* A fake publisher handing out the genuine memory with the resolution patched (said,
 * ns, ticks): the resolution its reader, attached, works with. */
static int64_t resolution_taken(int g, size_t n, uint32_t said, int64_t ns, uint64_t ticks)
{
	struct fts__shm_head h = { .res_said = said, .res_ns = ns, .res_ticks = ticks };
	size_t from = offsetof(struct fts__shm_head, res_said);
	struct fts_info in;
	char f[160];
	pid_t p;

	snprintf(f, sizeof(f), "%s/fake", dir);
	p = fake_serve(f, memory(g, n, from, (char *)&h + from, sizeof(h) - from, SEALED),
		       HANDS_OUT);
	attach_info(f, &in);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	unlink(f);
	print_message("  said %u, %lld ns, %llu ticks -> %s, %lld ns\n", said, (long long)ns,
		      (unsigned long long)ticks, in.history_source, (long long)in.clock_res_ns);
	assert_string_equal(in.history_source, "shared");
	return in.clock_res_ns;
}

/* The clocks' resolution: serve says what it found, and a reader takes it instead of
 * probing its own (a first conversion's 20-30 us); one a publisher before it did not
 * say, or one out of reason, the reader finds itself. 3001 ns: a grid no probe here
 * finds (a fine clock gives 0, acpi_pm 279 ns, a 1 us counter 1000). */
static void resolution_said(void **state)
{
	pid_t svc = serve(20);
	struct fts__shm_head h;
	uint64_t grid;
	size_t n;
	int g;
	(void)state;

	g = genuine(&n);
	assert_int_equal(pread(g, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	assert_int_equal(h.res_said, 1);
	assert_true(h.res_ns >= 0 && (h.res_ns == 0) == (h.res_ticks == 0));
	grid = (uint64_t)((unsigned __int128)3001 * h.counter_hz / 1000000000);
	assert_int_equal(resolution_taken(g, n, 1, 3001, grid + grid / 10 + 1), 3001);
	/* not said (a publisher before the fields), or out of reason: its own probe */
	assert_int_not_equal(resolution_taken(g, n, 0, 3001, grid + grid / 10 + 1), 3001);
	assert_int_not_equal(resolution_taken(g, n, 1, 3001, grid / 2), 3001);
	assert_int_not_equal(resolution_taken(g, n, 1, 3001, 0), 3001);
	grid = (uint64_t)((unsigned __int128)(FTS__SHM_RES_MAX_NS + 1) * h.counter_hz / 1000000000);
	assert_int_not_equal(resolution_taken(g, n, 1, FTS__SHM_RES_MAX_NS + 1, grid + grid / 10 + 1),
			     FTS__SHM_RES_MAX_NS + 1);
	close(g);
	unserve(svc);
}

/* serve --record: the stamps of any process, stored while it ran, convert later from
 * the record alone (here: in this process, which never converted while storing). */
static void record_converts_any_process(void **state)
{
	static struct fts__sbracket br[3000];
	char rec[200];
	pid_t svc;
	int fd, st;
	struct fts_calib *c;
	size_t covered = 0;
	(void)state;

	snprintf(rec, sizeof(rec), "/tmp/fts-shared-record.%ld", (long)getpid());
	unlink(rec);
	svc = serve_rec(10, rec);
	for (int i = 0; i < 3000; i++) {
		fts__sbracket_take(&br[i]);
		if (i % 100 == 0)
			sleep_ms(10);
	}
	sleep_ms(50);   /* a sample after the last stamp */
	kill(svc, SIGTERM);   /* the record is flushed and closed */
	waitpid(svc, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	fd = open(rec, O_RDONLY);
	assert_true(fd >= 0);
	c = fts_calib_load(fd);
	close(fd);
	assert_non_null(c);
	for (int i = 0; i < 3000; i++) {
		int64_t ns, err;
		assert_int_equal(fts_calib_convert(c, br[i].s, &ns, &err), 0);
		covered += fts__sbracket_miss(&br[i], ns) <= err;
	}
	print_message("serve --record: %zu of 3000 stamps of another process covered from the "
		      "record, %zu knots\n", covered, fts_calib_count(c));
	assert_int_equal(covered, 3000);
	fts_calib_free(c);
	unlink(rec);
	unserve(svc);
}

/* One publisher per path; SIGINT stops it as SIGTERM does. */
static void one_publisher(void **state)
{
	pid_t svc = serve(20);
	char cmd[400], out[400] = "", source[16], note[240];
	FILE *p;
	int st;
	(void)state;

	snprintf(cmd, sizeof(cmd), "%s serve --path %s 2>&1", tool(), path);
	p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	print_message("  a second publisher: exit %d, %s", WEXITSTATUS(st), out);
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_non_null(strstr(out, "another faststamp serve publishes here"));
	kill(svc, SIGINT);
	waitpid(svc, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* its socket went with it */
	attach_in_child(path, source, note);
	print_message("  after SIGINT: %s (%s)\n", source, note);
	assert_string_equal(source, "process");
	assert_non_null(strstr(note, "No such file or directory"));
	unserve(svc);
}

static void wrongly_owned_file(void **state)
{
	pid_t svc;
	size_t n;
	int g;
	(void)state;
	if (geteuid() != 0)
		FTS_SKIP("a publisher of another user needs root");
	svc = serve(20);
	g = genuine(&n);
	expect_fake_refused(memory(g, n, 0, NULL, 0, SEALED), AS_NOBODY,
			    "its publisher runs as uid 65534");
	close(g);
	unserve(svc);
}

/* A publisher run as the service's user (FTS_SERVICE_USER), as the unit runs it, and a
 * reader of another user: trusted when /etc/passwd names that user with the publisher's
 * uid, though NSS, told to look nowhere, knows no such user (the file is read, not NSS:
 * NSS costs a cold process several times more); refused when it names another uid. */
static void service_user_trusted(void **state)
{
	char etc[80], f[160], source[16], note[240], want[64];
	pid_t svc;
	size_t n;
	int g;
	(void)state;
	if (geteuid() != 0)
		FTS_SKIP("a publisher and a reader of other users need root");
	svc = serve(20);
	g = genuine(&n);
	assert_int_equal(chmod(dir, 0755), 0);   /* the reader's user reaches the path */
	snprintf(etc, sizeof(etc), "%s/etc", dir);
	assert_int_equal(mkdir(etc, 0755), 0);
	snprintf(f, sizeof(f), "%s/nsswitch.conf", etc);
	write_text(f, "passwd: nowhere\ngroup: nowhere\n");
	attach_as = 4646;
	etc_as = etc;
	for (int right = 1; right >= 0; right--) {
		char pw[512];
		snprintf(pw, sizeof(pw), "root:x:0:0:root:/root:/bin/sh\n%s:x:%d:%d::/nonexistent:"
			 "/usr/sbin/nologin\n", FTS_SERVICE_USER, right ? SERVICE_UID : 4747,
			 SERVICE_UID);
		snprintf(f, sizeof(f), "%s/passwd", etc);
		write_text(f, pw);
		snprintf(f, sizeof(f), "%s/fake", dir);
		pid_t p = fake_serve(f, memory(g, n, 0, NULL, 0, SEALED), AS_SERVICE);
		attach_in_child(f, source, note);
		print_message("  %s's uid %s -> %s: %s\n", FTS_SERVICE_USER, right ? "the publisher's" :
			      "another", source, note);
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
		unlink(f);
		if (right) {
			assert_string_equal(source, "shared");
		} else {
			snprintf(want, sizeof(want), "its publisher runs as uid %d", SERVICE_UID);
			assert_string_equal(source, "process");
			assert_non_null(strstr(note, want));
		}
	}
	attach_as = 0;
	etc_as = NULL;
	close(g);
	snprintf(f, sizeof(f), "%s/passwd", etc);
	unlink(f);
	snprintf(f, sizeof(f), "%s/nsswitch.conf", etc);
	unlink(f);
	rmdir(etc);
	unserve(svc);
}

/* ---- one user's flood ------------------------------------------------------------- */

#define FLOOD 3000          /* connections: the kernel's cap (serve's 1024 files) thrice */
#define FLOOD_UID 4242      /* the flooder, and another user: any uids (need not exist) */
#define OTHER_UID 4343

/* As FLOOD_UID: FLOOD connections to the publisher that read nothing, until a byte on
 * go; then read every answer and write to out how many held an fd, the refusal, or
 * nothing. */
static int flood_child(int ready, int go, int out)
{
	static int s[FLOOD];
	struct rlimit r = { FLOOD + 64, FLOOD + 64 };   /* this test's own limit aside */
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int counts[3] = { 0, 0, 0 };
	char c;

	memcpy(a.sun_path, path, strlen(path));
	if (setrlimit(RLIMIT_NOFILE, &r) < 0 || setgroups(0, NULL) < 0 || setgid(FLOOD_UID) < 0 ||
	    setuid(FLOOD_UID) < 0)
		return 1;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(60);
	for (int i = 0; i < FLOOD; i++) {
		s[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s[i] < 0 || connect(s[i], (struct sockaddr *)&a, sizeof(a)) < 0)
			return 2;
	}
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 3;
	for (int i = 0; i < FLOOD; i++) {
		char byte = 0, ctl[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { &byte, 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
				    .msg_controllen = sizeof(ctl) };
		struct cmsghdr *cm;
		ssize_t got = recvmsg(s[i], &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		int fd = -1;
		if (got == 1 && (cm = CMSG_FIRSTHDR(&m)) && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		counts[fd >= 0 ? 0 : got == 1 && byte == FTS__SHM_REFUSED ? 1 : 2]++;
		if (fd >= 0)
			close(fd);
		close(s[i]);
	}
	return write(out, counts, sizeof(counts)) == sizeof(counts) ? 0 : 4;
}

/* The flood's last connections fill serve's listen queue (128) until its thread has
 * accepted some: a reader connecting then is told its publisher is too busy, a
 * moment's state of any flood and no refusal of its user. It tries again (1 s at
 * most); any other answer stands. */
static void attach_past_queue(char *source, char *note)
{
	for (int i = 0; i < 100; i++) {
		attach_in_child(path, source, note);
		if (!strstr(note, "too busy"))
			return;
		print_message("  (serve's queue full: again)\n");
		sleep_ms(10);
	}
}

static void flood_one_user(void **state)
{
	char source[16], note[240], said[4096];
	int ready[2], go[2], out[2], counts[3], st;
	pid_t svc, fl;
	(void)state;

	if (geteuid() != 0)
		FTS_SKIP("a flood from another user needs root");
	serve_as_unit = 1;
	svc = serve(20);
	serve_as_unit = 0;
	assert_int_equal(chmod(dir, 0755), 0);   /* other users reach the path */
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(out), 0);
	fl = fork();
	assert_true(fl >= 0);
	if (fl == 0)
		_exit(flood_child(ready[1], go[0], out[1]));
	close(ready[1]);
	close(go[0]);
	close(out[1]);
	assert_int_equal(read(ready[0], &st, 1), 1);
	attach_past_queue(source, note);
	print_message("  root, under uid %d's %d connections unread: %s %s\n", FLOOD_UID, FLOOD,
		      source, note);
	assert_string_equal(source, "shared");
	attach_as = OTHER_UID;
	attach_past_queue(source, note);
	attach_as = 0;
	print_message("  uid %d: %s %s\n", OTHER_UID, source, note);
	assert_string_equal(source, "shared");
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(out[0], counts, sizeof(counts)), sizeof(counts));
	assert_int_equal(waitpid(fl, &st, 0), fl);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	serve_said(said, sizeof(said));
	print_message("  uid %d's connections: %d held an fd, %d refused, %d nothing; serve said: "
		      "%s", FLOOD_UID, counts[0], counts[1], counts[2], said);
	assert_true(counts[0] > 0 && counts[0] <= FTS__SHM_UID_MAX);
	assert_int_equal(counts[1], FLOOD - counts[0]);
	assert_non_null(strstr(said, "uid 4242 leaves"));
	close(ready[0]);
	close(go[1]);
	close(out[0]);
	unserve(svc);
}

/* ---- the publisher and readers in one process ------------------------------------- */

static void *reader(void *arg)
{
	size_t *bad = arg;
	int64_t end = mono() + 1000000000;
	fast_timestamp_t first;

	store_fast_timestamp(&first);
	while (mono() < end) {
		struct fts__sbracket b;
		int64_t ns, err;
		fts__sbracket_take(&b);
		if (fts_convert(&b.s, &ns, &err) < 0 || fts__sbracket_miss(&b, ns) > err)
			(*bad)++;
		if (fts_convert(&first, &ns, &err) < 0)
			(*bad)++;
	}
	return NULL;
}

static int publisher_child(void)
{
	char err[256];
	size_t bad[2] = { 0, 0 };
	pthread_t t[2];
	struct fts_info in = { .size = sizeof(in) };

	snprintf(dir, sizeof(dir), "/tmp/fts-shared.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/clock", dir);
	if (fts__clock_serve(path, 1000000, err, sizeof(err)) < 0) {
		printf("serve: %s\n", err);
		return 1;
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader, &bad[i]);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	fts_get_info(&in);
	fts__clock_serve_stop("the test ended");
	printf("publishing every 1 ms with two threads converting for 1 s: %zu bad; %zu knots\n",
	       bad[0] + bad[1], in.samples);
	unlink(path);
	snprintf(err, sizeof(err), "%s.lock", path);
	unlink(err);
	rmdir(dir);
	return bad[0] + bad[1] != 0 || in.samples < 10;
}

static void publisher_and_readers(void **state)
{
	(void)state;
	in_child(publisher_child);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_clients_identical),
		cmocka_unit_test(every_clock_shared),
		cmocka_unit_test(kill9_storm),
		cmocka_unit_test(truncate_storm),
		cmocka_unit_test(overwrite_storm),
		cmocka_unit_test(copy_over_storm),
		cmocka_unit_test(sealed_memory),
		cmocka_unit_test(path_taken),
		cmocka_unit_test(hostile_files),
		cmocka_unit_test(resolution_said),
		cmocka_unit_test(record_converts_any_process),
		cmocka_unit_test(one_publisher),
		cmocka_unit_test(wrongly_owned_file),
		cmocka_unit_test(service_user_trusted),
		cmocka_unit_test(flood_one_user),
		cmocka_unit_test(publisher_and_readers),
	};
	if (!fts__store_counter) {
		printf("SKIP: no counter in use: there is nothing to share\n");
		return 77;
	}
	return fts_test_run(tests, argc, argv);
}
