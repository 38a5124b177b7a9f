/* test_guest.c - the library as a guest in a program it does not control: fork while
 * other threads convert, floods of signals, a program's signals and the sampler
 * thread, no thread to be had, fts_get_info with old and odd struct sizes. Each case
 * that needs a fresh process runs this program again (/proc/self/exe CASE) and judges
 * its exit status with a deadline, so a hang fails rather than stalls the suite. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "testmain.h"

#include "bracket.h"
#include "faststamp.h"
#include "internal.h"
#include "calib.h"
#include "clock.h"

static int64_t now(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Run this program with arg in a child; its exit status, or -signal, or -1000 when it
 * did not finish within secs (then it is killed). */
static int run_child(const char *arg, int secs)
{
	int64_t deadline = now(CLOCK_MONOTONIC) + (int64_t)secs * 1000000000;
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/proc/self/exe", "test_guest", arg, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now(CLOCK_MONOTONIC) > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			print_message("%s: no exit within %d s: killed\n", arg, secs);
			return -1000;
		}
		usleep(10000);
	}
	if (WIFSIGNALED(st)) {
		print_message("%s: killed by signal %d\n", arg, WTERMSIG(st));
		return -WTERMSIG(st);
	}
	return WEXITSTATUS(st);
}

static int expect_child(const char *arg, int secs)
{
	int rc = run_child(arg, secs);
	if (rc == 77) {
		FTS_SKIP("%s: see its output above", arg);
	}
	assert_int_equal(rc, 0);
	return rc;
}

/* ---- fork while other threads convert and the history is written ----------------- */

static int stop_threads;

static void *converter(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_threads, __ATOMIC_RELAXED)) {
		fast_timestamp_t s;
		int64_t ns, err;
		store_fast_timestamp(&s);
		fts_convert(&s, &ns, &err);
	}
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_threads, __ATOMIC_RELAXED))
		fts__clock_sample();   /* a history write, as often as it can be */
	return NULL;
}

static void fork_while_converting(void **unused)
{
	pthread_t t[5];
	int hung = 0, failed = 0, torn = 0;
	(void)unused;

	assert_int_equal(fts_clock_start(), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(pthread_create(&t[i], NULL, i ? converter : writer, NULL), 0);
	/* Under a sanitizer a fork costs 3-4 times more: fewer forks there, where the
	 * sanitizer looks at what each child does rather than at how often a fork meets
	 * an add half done (the plain build's 2000). */
	for (int i = 0; i < (FTS_TEST_SANITIZED ? 500 : 2000); i++) {
		pid_t pid = fork();
		int st;
		if (pid == 0) {
			fast_timestamp_t s;
			int64_t ns, err;
			alarm(2);   /* a child stuck on a lock or a half-written history */
			/* the history as the fork left it: no add half done */
			if (!fts__calib_in_sync(fts__clock_history(FTS__CLK_REALTIME)))
				_exit(2);
			fts__clock_sample();   /* the child's own samples go on */
			store_fast_timestamp(&s);
			_exit(fts_convert(&s, &ns, &err) == 0 ? 0 : 1);
		}
		assert_true(pid > 0);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		hung += WIFSIGNALED(st);
		torn += WIFEXITED(st) && WEXITSTATUS(st) == 2;
		failed += WIFEXITED(st) && WEXITSTATUS(st) == 1;
		if (hung + failed + torn >= 3)   /* enough to know */
			break;
	}
	__atomic_store_n(&stop_threads, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	print_message("forks while 4 threads converted and one wrote the history: "
		      "%d children hung, %d inherited an add half done, %d failed\n", hung, torn,
		      failed);
	assert_int_equal(hung, 0);
	assert_int_equal(torn, 0);
	assert_int_equal(failed, 0);
}

/* ---- signal floods ---------------------------------------------------------------- */

static volatile sig_atomic_t handled, handled_elsewhere;
static pid_t main_tid;

static void on_alarm(int sig)
{
	(void)sig;
	handled++;
	if ((pid_t)syscall(SYS_gettid) != main_tid)
		handled_elsewhere++;
}

static void flood(long interval_us)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, interval_us }, { 0, interval_us } };

	main_tid = (pid_t)syscall(SYS_gettid);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

/* A fresh process under a signal every interval: the first conversion (with its
 * calibration sleeps), fts_get_info and fts_diff_ns (the frequency measurement's
 * sleep) must all return. */
static int child_signals(long interval_us, unsigned long slack_ns)
{
	struct fts_info in = { .size = sizeof(in) };
	fast_timestamp_t a, b;
	int64_t ns, err;

	if (slack_ns)
		prctl(PR_SET_TIMERSLACK, slack_ns, 0, 0, 0);
	flood(interval_us);
	store_fast_timestamp(&a);
	if (fts_convert(&a, &ns, &err) < 0 || fts_get_info(&in) < 0)
		return 1;
	store_fast_timestamp(&b);
	if (fts_diff_ns(&a, &b, &ns) < 0)
		return 1;
	printf("under a signal every %ld us (timer slack %lu ns): converted, info and diff "
	       "returned; %d signals handled\n", interval_us, slack_ns, (int)handled);
	return 0;
}

static void signal_flood(void **unused)
{
	(void)unused;
	expect_child("signals-20us", 20);
	expect_child("signals-5ms-slack", 20);
}

/* The program's signals never run on the sampler thread, and interrupting nothing,
 * they do not make it sample more often. */
static int child_sampler_signals(void)
{
	uint64_t before;
	int64_t end;
	struct fts_info in = { .size = sizeof(in) };
	fast_timestamp_t s;

	if (!fts__store_counter) {
		printf("SKIP: no counter in use, so no sampler thread\n");
		return 77;
	}
	if (fts_clock_start() < 0)
		return 1;
	store_fast_timestamp(&s);
	before = fts__clock_samples_taken();
	flood(50);
	end = now(CLOCK_MONOTONIC) + 2000000000;
	while (now(CLOCK_MONOTONIC) < end) {
		int64_t ns;
		struct timespec ms = { 0, 1000000 };
		sigset_t alarm;

		fts_convert(&s, &ns, NULL);   /* keeps the sampler from going idle */
		/* The kernel gives a process's signal to its main thread while that one can
		 * take it: blocked there while it sleeps, it goes to any other thread that
		 * does not block it (the sampler, were it to take signals), or waits for
		 * the main thread's unblock. */
		sigemptyset(&alarm);
		sigaddset(&alarm, SIGALRM);
		pthread_sigmask(SIG_BLOCK, &alarm, NULL);
		nanosleep(&ms, NULL);
		pthread_sigmask(SIG_UNBLOCK, &alarm, NULL);
	}
	setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 0 }, { 0, 0 } }, NULL);
	fts_get_info(&in);
	printf("%d signals handled, %d on another thread than main; %llu samples in 2 s; "
	       "sampler %s\n", (int)handled, (int)handled_elsewhere,
	       (unsigned long long)(fts__clock_samples_taken() - before),
	       in.sampler_running ? "running" : "not running");
	/* 2 s at 100 ms a round */
	return handled > 1000 && handled_elsewhere == 0 && in.sampler_running &&
	       fts__clock_samples_taken() - before <= 25 ? 0 : 1;
}

static void sampler_takes_no_signals(void **unused)
{
	(void)unused;
	expect_child("sampler-signals", 60);
}

/* ---- no thread to be had ---------------------------------------------------------- */

static void *nothing(void *arg)
{
	return arg;
}

/* As root, RLIMIT_NPROC binds only another user: become one that runs nothing, with a
 * soft limit of one process (the hard one stays, so *was can be set again before exit,
 * for the sanitizers' threads: LeakSanitizer's, at exit). 0, or 77 having said why
 * thread creation cannot be made to fail here. */
static int no_threads(struct rlimit *was)
{
	struct rlimit one;
	pthread_t t;

	if (getuid() == 0 && (setgid(65534) || setuid(65534))) {
		printf("SKIP: cannot drop to uid 65534: %s\n", strerror(errno));
		return 77;
	}
	getrlimit(RLIMIT_NPROC, was);
	one = (struct rlimit){ 1, was->rlim_max };
	if (setrlimit(RLIMIT_NPROC, &one) || pthread_create(&t, NULL, nothing, NULL) == 0) {
		printf("SKIP: cannot make thread creation fail with RLIMIT_NPROC here\n");
		return 77;
	}
	return 0;
}

static int child_no_thread(void)
{
	struct rlimit was;
	static struct fts__sbracket kept[4000];
	size_t n = 0, uncovered = 0, conversions = 0;
	long double sum = 0;
	int64_t end;
	struct fts_info in = { .size = sizeof(in) };
	struct fts__clock_state cs;

	if (!fts__store_counter) {
		printf("SKIP: no counter in use, so no sampler thread\n");
		return 77;
	}
	/* Where the counter needs its proof across CPUs (kvm-clock), it is done while
	 * threads can still be had: this child tests the sampler's absence. */
	if (fts__clock_prove() < 0) {
		printf("the warp test could not run\n");
		return 1;
	}
	if (no_threads(&was))
		return 77;
	if (fts_clock_start() < 0)
		return 1;
	/* Convert fresh stamps as fast as possible for 2 s, keeping one a millisecond. */
	end = now(CLOCK_MONOTONIC) + 2000000000;
	while (now(CLOCK_MONOTONIC) < end) {
		struct fts__sbracket b;
		int64_t ns, err;
		fts__sbracket_take(&b);
		if (fts_convert(&b.s, &ns, &err) < 0)
			return 1;
		conversions++;
		uncovered += fts__sbracket_miss(&b, ns) > err;
		if (n < 4000 && (n == 0 || b.t0 - kept[n - 1].t0 >= 1000000))
			kept[n++] = b;
	}
	/* and then all of them, 0 to 2 s old */
	for (size_t i = 0; i < n; i++) {
		int64_t ns, err;
		if (fts_convert(&kept[i].s, &ns, &err) < 0)
			return 1;
		uncovered += fts__sbracket_miss(&kept[i], ns) > err;
		sum += err;
	}
	fts_get_info(&in);
	fts__clock_state(&cs);
	was.rlim_cur = was.rlim_max;
	setrlimit(RLIMIT_NPROC, &was);
	printf("no thread: %zu conversions in 2 s took %llu samples and %llu attempts to start "
	       "the sampler; %zu stamps converted later, mean bound %.0Lf ns; %zu uncovered; "
	       "sampler %s\n", conversions, (unsigned long long)in.samples_taken,
	       (unsigned long long)cs.thread_starts, n, sum / n, uncovered,
	       in.sampler_running ? "running" : "not running");
	/* Samples at the sampler's rate (one per 100 ms: 20 in 2 s, the first three and a
	 * margin), so old stamps keep narrow bounds; thread starts backed off (at 0 and
	 * 1 s). */
	return !in.sampler_running && uncovered == 0 && in.samples_taken <= 40 &&
	       cs.thread_starts <= 2 && sum / n < 5000 ? 0 : 1;
}

static void no_thread(void **unused)
{
	(void)unused;
	expect_child("no-thread", 60);
}

/* Where the counter needs the warp test (kvm-clock) and no thread can be had for it:
 * new stamps are clock readings, a counter stamp stored before cannot be converted
 * (EAGAIN: its CPU's offset is unknown) until the test runs, retried after 1 s. */
static int child_no_thread_proof(void)
{
	struct rlimit was;
	struct fts_info in = { .size = sizeof(in) };
	fast_timestamp_t before, after;
	int64_t ns, err, end;
	int rc;

	if (!fts__store_counter || fts__clock_skew_ns() != 0) {
		printf("SKIP: no counter in use\n");
		return 77;
	}
	fts_get_info(&in);
	if (strncmp(in.proof, "pending", 7)) {
		printf("SKIP: the counter needs no proof across CPUs here (%s), and this "
		       "process could not be shown kvm-clock\n", in.proof);
		return 77;
	}
	store_fast_timestamp(&before);
	if (no_threads(&was))
		return 77;
	rc = fts_convert(&before, &ns, &err) < 0 ? errno : 0;
	store_fast_timestamp(&after);
	fts_get_info(&in);
	printf("no thread for the warp test: convert: %s, new stamps %s; %s\n", strerror(rc),
	       after & FTS_STAMP_CLOCK_TAG ? "clock readings" : "counter", in.proof);
	if (rc != EAGAIN || !(after & FTS_STAMP_CLOCK_TAG) || in.cpu_skew_ns != -1)
		return 1;
	/* threads again: the test runs at the next conversion after its retry time */
	was.rlim_cur = was.rlim_max;
	setrlimit(RLIMIT_NPROC, &was);
	end = now(CLOCK_MONOTONIC) + 3000000000;
	while ((rc = fts_convert(&before, &ns, &err)) < 0 && now(CLOCK_MONOTONIC) < end)
		usleep(50000);
	store_fast_timestamp(&after);
	fts_get_info(&in);
	printf("threads again: convert %d, new stamps %s; %s; skew %lld ns\n", rc,
	       after & FTS_STAMP_CLOCK_TAG ? "clock readings" : "counter", in.proof,
	       (long long)in.cpu_skew_ns);
	/* the skew: no longer unknown (-1), and at least the hand-overs' latency */
	return rc == 0 && !(after & FTS_STAMP_CLOCK_TAG) && in.cpu_skew_ns >= 0 ? 0 : 1;
}

/* Run as if the kernel kept time with kvm-clock, whatever it keeps time with: in a
 * mount namespace of its own, a file saying so is bound over the clocksource's, and
 * the program starts again there (the library reads it as it loads). Root only. */
static int as_kvm_clock(char **argv)
{
	static const char cs[] = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
	char path[] = "/tmp/fts-cs.XXXXXX";
	int fd;

	if (getenv("FTS_AS_KVM_CLOCK"))
		return 0;   /* there already */
	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 0;   /* not root: the machine's own clocksource */
	if ((fd = mkstemp(path)) < 0 || write(fd, "kvm-clock\n", 10) != 10 ||
	    mount(path, cs, NULL, MS_BIND, NULL) < 0) {
		printf("as kvm-clock: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	unlink(path);
	setenv("FTS_AS_KVM_CLOCK", "1", 1);
	execv("/proc/self/exe", argv);
	printf("as kvm-clock: exec: %s\n", strerror(errno));
	return 1;
}

static void no_thread_for_proof(void **unused)
{
	(void)unused;
	expect_child("no-thread-proof", 60);
}

/* ---- fts_get_info and the size of the caller's struct ----------------------------- */

static void info_sizes(void **unused)
{
	struct fts_info full = { .size = sizeof(full) };
	union { struct fts_info in; unsigned char b[sizeof(struct fts_info)]; } u;
	size_t cut = offsetof(struct fts_info, samples_taken) + 3;   /* inside a field */
	(void)unused;

	assert_int_equal(fts_get_info(&full), 0);
	/* Below the first group: refused, untouched. */
	memset(&u, 0xa5, sizeof(u));
	u.in.size = FTS_INFO_MIN_SIZE - 1;
	errno = 0;
	assert_int_equal(fts_get_info(&u.in), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(u.b[offsetof(struct fts_info, backend)], 0xa5);
	/* The first group exactly: filled, not a byte more. */
	memset(&u, 0xa5, sizeof(u));
	u.in.size = FTS_INFO_MIN_SIZE;
	assert_int_equal(fts_get_info(&u.in), 0);
	assert_string_equal(u.in.backend, full.backend);
	for (size_t i = FTS_INFO_MIN_SIZE; i < sizeof(u); i++)
		assert_int_equal(u.b[i], 0xa5);
	/* A size ending inside a field: the fields before it, none of it. */
	memset(&u, 0xa5, sizeof(u));
	u.in.size = cut;
	assert_int_equal(fts_get_info(&u.in), 0);
	assert_int_equal(u.in.samples, full.samples);
	for (size_t i = offsetof(struct fts_info, samples_taken); i < sizeof(u); i++)
		assert_int_equal(u.b[i], 0xa5);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(info_sizes),
		cmocka_unit_test(signal_flood),
		cmocka_unit_test(sampler_takes_no_signals),
		cmocka_unit_test(no_thread),
		cmocka_unit_test(no_thread_for_proof),
		cmocka_unit_test(fork_while_converting),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "signals-20us"))
		return child_signals(20, 0);
	if (argc == 2 && !strcmp(argv[1], "signals-5ms-slack"))
		return child_signals(5000, 20000000);
	if (argc == 2 && !strcmp(argv[1], "sampler-signals"))
		return child_sampler_signals();
	if (argc == 2 && !strcmp(argv[1], "no-thread"))
		return child_no_thread();
	if (argc == 2 && !strcmp(argv[1], "no-thread-proof"))
		return as_kvm_clock(argv) ? 1 : child_no_thread_proof();
	return fts_test_run(tests, argc, argv);
}
