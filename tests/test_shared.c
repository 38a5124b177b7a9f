/* test_shared.c - one calibration for the machine: `faststamp serve` (FTS_TOOL) runs as a
 * process of its own, publishing in a directory this test makes; clients are children
 * of the test, each a fresh process that finds the history at its first conversion.
 *   two_clients_identical      the same stamps, the same ns and bounds, in two
 *                              processes; no thread, no calibration time in either
 *   kill9_storm                the service killed (-9) while conversions run: none
 *                              fails, every bound holds against its bracket, before
 *                              and after the clients leave the shared history
 *   hostile_files              corrupt, truncated, group-writable, of another boot,
 *                              stopped, stale: refused, with the reason in fts_info
 *   record_converts_any_process  serve --record: another process's stamps convert from
 *                              the record alone, each within its bound
 *   one_publisher              a second publisher at the same path is refused; SIGINT
 *                              stops the first cleanly, and clients see it stopped
 *   wrongly_owned_file         owned by another user: refused (needs root to chown)
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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "testmain.h"

#include "bracket.h"
#include "faststamp.h"
#include "internal.h"
#include "shared.h"

static char dir[64], path[128];

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
	pid_t pid;

	snprintf(dir, sizeof(dir), "/tmp/fts-shared.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/clock", dir);
	snprintf(iv, sizeof(iv), "%d", interval_ms);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		prctl(PR_SET_PDEATHSIG, SIGKILL);   /* a failed test leaves no service behind */
		dup2(null, 1);
		if (record)
			execl(FTS_TOOL, FTS_TOOL, "serve", "--path", path, "--interval-ms", iv,
			      "--record", record, (char *)NULL);
		else
			execl(FTS_TOOL, FTS_TOOL, "serve", "--path", path, "--interval-ms", iv,
			      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && access(path, F_OK) < 0; i++)
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
	rmdir(dir);
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
	int64_t first_ns;   /* the first conversion's cost */
};

static void client(const fast_timestamp_t *st, struct answers *a)
{
	int64_t t0 = mono();
	struct fts_info in = { .size = sizeof(in) };
	int before = threads();   /* a sanitizer's own thread counts too */

	setenv("FASTSTAMP_SHARED", path, 1);
	assert_int_equal(fts_convert(&st[0], &a->ns[0], &a->err[0]), 0);
	a->first_ns = mono() - t0;
	assert_int_equal(fts_convert_array(st, N, a->ns, a->err), 0);
	assert_int_equal(fts_get_info(&in), 0);
	snprintf(a->source, sizeof(a->source), "%s", in.history_source);
	a->threads = threads() - before;
}

static void two_clients_identical(void **state)
{
	static fast_timestamp_t st[N];
	static struct fts__sbracket br[N];
	struct answers *a[2];
	pid_t svc = serve(20);
	(void)state;

	for (int i = 0; i < N; i++) {
		fts__sbracket_take(&br[i]);
		st[i] = br[i].s;
		if (i % 100 == 0)
			sleep_ms(1);
	}
	sleep_ms(100);   /* samples after the last stamp: all inside the history */
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
	assert_int_equal(same, N);
	assert_int_equal(covered, N);
	free(a[0]);
	free(a[1]);
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

/* ---- files a reader refuses ------------------------------------------------------- */

/* In a fresh process: the history its first conversion uses, and why. */
static void attach_in_child(const char *file, char *source, char *note)
{
	struct fts_info in = { .size = sizeof(in) };
	int fd[2];
	pid_t p;

	assert_int_equal(pipe(fd), 0);
	p = fork();
	if (p == 0) {
		fast_timestamp_t s;
		int64_t ns, err;
		setenv("FASTSTAMP_SHARED", file, 1);
		store_fast_timestamp(&s);
		if (fts_convert(&s, &ns, &err) < 0 || fts_get_info(&in) < 0)
			_exit(1);
		write(fd[1], &in, sizeof(in)) == sizeof(in) ? _exit(0) : _exit(1);
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], &in, sizeof(in)), sizeof(in));
	close(fd[0]);
	waitpid(p, NULL, 0);
	strcpy(source, in.history_source);
	strcpy(note, in.history_note);
}

static void copy_file(const char *from, const char *to, size_t cut, int mode)
{
	int a = open(from, O_RDONLY), b = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char buf[65536];
	size_t done = 0;
	ssize_t r;

	assert_true(a >= 0 && b >= 0);
	while ((!cut || done < cut) && (r = read(a, buf, cut && cut - done < sizeof(buf) ? cut - done : sizeof(buf))) > 0) {
		assert_int_equal(write(b, buf, (size_t)r), r);
		done += (size_t)r;
	}
	close(a);
	fchmod(b, (mode_t)mode);
	close(b);
}

static void patch(const char *file, size_t off, const void *bytes, size_t n)
{
	int fd = open(file, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, bytes, n, (off_t)off), (ssize_t)n);
	close(fd);
}

static void expect_refused(const char *file, const char *why)
{
	char source[16], note[240];
	attach_in_child(file, source, note);
	print_message("  %-28s -> %s: %s\n", why, source, note);
	assert_string_equal(source, "process");
	assert_non_null(strstr(note, why));
}

static void hostile_files(void **state)
{
	pid_t svc = serve(20);
	char f[160], source[16], note[240];
	uint32_t v;
	(void)state;

	/* the genuine file first: used */
	attach_in_child(path, source, note);
	assert_string_equal(source, "shared");
	snprintf(f, sizeof(f), "%s/copy", dir);
	copy_file(path, f, 0, 0644);
	patch(f, 0, "NOTFTSHM", 8);
	expect_refused(f, "not a faststamp shared history");
	copy_file(path, f, 0, 0644);
	v = 99;
	patch(f, offsetof(struct fts__shm_head, version), &v, 4);
	expect_refused(f, "a version of the shared history");
	copy_file(path, f, 1000000, 0644);
	expect_refused(f, "does not match its size");
	copy_file(path, f, 100, 0644);
	expect_refused(f, "too short");
	copy_file(path, f, 0, 0664);
	expect_refused(f, "writable by its group or others");
	copy_file(path, f, 0, 0644);
	patch(f, offsetof(struct fts__shm_head, boot_id), "0123456789abcdef", 16);
	expect_refused(f, "another boot");
	copy_file(path, f, 0, 0644);
	patch(f, offsetof(struct fts__shm_head, clocksource), "hpet", 5);
	expect_refused(f, "its clocksource is hpet");
	/* a copy is a file no one beats for */
	copy_file(path, f, 0, 0644);
	sleep_ms(1200);
	expect_refused(f, "heartbeat is over 1 s old");
	unlink(f);
	expect_refused(f, "No such file or directory");
	symlink(path, f);
	expect_refused(f, "Too many levels of symbolic links");   /* O_NOFOLLOW */
	unlink(f);
	unserve(svc);
	/* stopped cleanly: the file says so */
	svc = serve(20);
	kill(svc, SIGTERM);
	waitpid(svc, NULL, 0);
	expect_refused(path, "its publisher stopped");
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

	snprintf(cmd, sizeof(cmd), "%s serve --path %s 2>&1", FTS_TOOL, path);
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
	attach_in_child(path, source, note);
	assert_string_equal(source, "process");
	assert_non_null(strstr(note, "its publisher stopped"));
	unserve(svc);
}

static void wrongly_owned_file(void **state)
{
	pid_t svc;
	char f[160];
	(void)state;
	if (geteuid() != 0)
		FTS_SKIP("chown to another user needs root");
	svc = serve(20);
	snprintf(f, sizeof(f), "%s/copy", dir);
	copy_file(path, f, 0, 0644);
	assert_int_equal(chown(f, 65534, 65534), 0);
	expect_refused(f, "owned by uid 65534");
	unlink(f);
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
		cmocka_unit_test(kill9_storm),
		cmocka_unit_test(hostile_files),
		cmocka_unit_test(record_converts_any_process),
		cmocka_unit_test(one_publisher),
		cmocka_unit_test(wrongly_owned_file),
		cmocka_unit_test(publisher_and_readers),
	};
	if (!fts__store_counter) {
		printf("SKIP: no counter in use: there is nothing to share\n");
		return 77;
	}
	return fts_test_run(tests, argc, argv);
}
