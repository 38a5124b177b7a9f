/* test_files.c - history files: a saved history loads to the same conversions; a
 * loaded one takes no samples; every truncation and every flipped byte of a file is
 * refused (EBADMSG) and nothing crashes; lengths the file does not back are never
 * allocated; the process clock's record converts every stamp stored while recording,
 * within its clock_gettime bracket; the record's rules (EEXIST, EBUSY, append); one
 * recorder a file, across processes; a failed start leaves nothing behind; a symbolic
 * link at the path is refused, not followed. */
#include <errno.h>
#include <float.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "testmain.h"
#include "faststamp.h"
#include "crc32.h"
#include "histfile.h"
#include "daysim.h"
#include "simclock.h"
#include "clock.h"

/* A file's header and its HEAD block: what a record holds before its first sample. */
#define HEADER_BYTES (16 + FTS__BLOCK_HEAD_BYTES + 80)

/* A file in memory (memfd) holding bytes p[0..n). */
static int mem_file(const void *p, size_t n)
{
	int fd = memfd_create("fts-test", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* A pipe whose read end gives bytes p[0..n) (n within the pipe's buffer), then ends:
 * a file whose length the reader cannot know. */
static int pipe_file(const void *p, size_t n)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	assert_true(n <= 65536);
	assert_int_equal(write(fds[1], p, n), (ssize_t)n);
	close(fds[1]);
	return fds[0];
}

/* The bytes of fd, from 0; *n their count. */
static unsigned char *slurp(int fd, size_t *n)
{
	off_t end = lseek(fd, 0, SEEK_END);
	unsigned char *b = malloc((size_t)end + 1);
	assert_non_null(b);
	assert_int_equal(pread(fd, b, (size_t)end, 0), end);
	*n = (size_t)end;
	return b;
}

static struct fts_calib *harsh_history(struct daysim *d, size_t n)
{
	struct fts_calib *c = fts_calib_new();
	assert_int_equal(daysim_harsh(d, n, 9), 0);
	for (size_t i = 0; i < d->nsamp; i++)
		assert_int_equal(fts_calib_add(c, d->b[i], d->r[i], d->a[i]), 0);
	return c;
}

/* The same answers from two histories, at counters across and around them; with
 * close, answers that agree within their bounds (histories built on machines whose
 * long double differs: a saved file's segments against ones computed here). */
static void assert_answers(const struct fts_calib *a, const struct fts_calib *b, uint64_t from,
			   uint64_t to, int close)
{
	uint64_t xs[] = { 0, 1, from - 1, from, to, to + 1, UINT64_MAX };
	for (int i = 0; i < 4000 + 7; i++) {
		uint64_t x = i < 7 ? xs[i] : from + (to - from) / 4000 * (uint64_t)(i - 7);
		int64_t n1 = 1, e1 = 2, n2 = 3, e2 = 4;
		int r1 = fts_calib_convert(a, x, &n1, &e1), er1 = errno;
		int r2 = fts_calib_convert(b, x, &n2, &e2), er2 = errno;
		assert_int_equal(r1, r2);
		if (r1 == 0 && close) {
			assert_true((n1 > n2 ? (uint64_t)n1 - (uint64_t)n2 : (uint64_t)n2 - (uint64_t)n1) <=
				    (uint64_t)e1 + (uint64_t)e2);
		} else if (r1 == 0) {
			assert_int_equal(n1, n2);
			assert_int_equal(e1, e2);
		} else {
			assert_int_equal(er1, er2);
		}
	}
}

static void assert_same(const struct fts_calib *a, const struct fts_calib *b, uint64_t from,
			uint64_t to)
{
	assert_answers(a, b, from, to, 0);
}

static void save_and_load(void **state)
{
	struct daysim d;
	struct fts_calib *c = harsh_history(&d, 3000), *l;
	uint64_t o1, n1, o2, n2;
	int fd = memfd_create("fts-save", MFD_CLOEXEC);
	size_t bytes;
	(void)state;

	assert_int_equal(fts_calib_save(c, fd), 0);
	free(slurp(fd, &bytes));
	print_message("3000 harsh samples: %zu knots, a file of %zu bytes\n", fts_calib_count(c),
		      bytes);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	l = fts_calib_load(fd);
	assert_non_null(l);
	assert_int_equal(fts_calib_count(l), fts_calib_count(c));
	assert_int_equal(fts_calib_range(c, &o1, &n1), 0);
	assert_int_equal(fts_calib_range(l, &o2, &n2), 0);
	assert_int_equal(o1, o2);
	assert_int_equal(n1, n2);
	assert_same(c, l, o1, n1);
	/* a loaded history converts, and takes no samples */
	errno = 0;
	assert_int_equal(fts_calib_add(l, n1 + 100, 0, n1 + 100), -1);
	assert_int_equal(errno, EPERM);
	/* bad arguments */
	errno = 0;
	assert_int_equal(fts_calib_save(NULL, fd), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fts_calib_save(c, -1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(fts_calib_load(-1));
	assert_int_equal(errno, EINVAL);
	{
		struct fts_calib *e = fts_calib_new();
		errno = 0;
		assert_int_equal(fts_calib_save(e, fd), -1);
		assert_int_equal(errno, ENODATA);
		fts_calib_free(e);
	}
	close(fd);
	fts_calib_free(l);
	fts_calib_free(c);
	daysim_free(&d);
}

/* Every prefix of a file and every byte of it flipped: refused, never a crash. */
static void corrupt_files(void **state)
{
	struct daysim d;
	struct fts_calib *c = harsh_history(&d, 600);
	int fd = memfd_create("fts-corrupt", MFD_CLOEXEC);
	unsigned char *good;
	size_t n, refused = 0, tried = 0;
	(void)state;

	assert_int_equal(fts_calib_save(c, fd), 0);
	good = slurp(fd, &n);
	close(fd);
	for (size_t len = 0; len < n; len += len < 256 ? 1 : 37) {
		int f = mem_file(good, len);
		errno = 0;
		assert_null(fts_calib_load(f));
		/* cut before the SEGS block's payload: a file with no history yet; inside
		 * it: damaged (a saved history is whole or nothing) */
		assert_int_equal(errno, len < HEADER_BYTES + FTS__BLOCK_HEAD_BYTES ? ENODATA : EBADMSG);
		close(f);
	}
	for (size_t i = 0; i < n; i += i < 256 ? 1 : 29) {
		struct fts_calib *l;
		int f;
		good[i] ^= 0x5a;
		f = mem_file(good, n);
		errno = 0;
		l = fts_calib_load(f);
		tried++;
		if (!l) {
			assert_int_equal(errno, EBADMSG);
			refused++;
		}
		fts_calib_free(l);
		close(f);
		good[i] ^= 0x5a;
	}
	print_message("%zu bytes: every prefix refused; %zu of %zu flipped bytes refused\n", n,
		      refused, tried);
	assert_int_equal(refused, tried);   /* a checksum, or a check, for every byte */
	free(good);
	fts_calib_free(c);
	daysim_free(&d);
}

/* A block that claims a gigabyte in a file of a few bytes: refused without taking
 * the memory (the allocation limit would fail a gigabyte). With its header's CRC
 * right, the file was cut inside that block (a record before its HEAD: ENODATA);
 * with it wrong, the file is damaged. */
static void hostile_lengths(void **state)
{
	unsigned char f[16 + FTS__BLOCK_HEAD_BYTES + 8] = { 0 };
	struct rlimit was, lim;
	int fd;
	(void)state;

	memcpy(f, FTS__FILE_MAGIC, 8);
	f[8] = FTS__FILE_VERSION;
	memcpy(f + 16, "FBLK", 4);   /* FTS__BLOCK_MAGIC, little-endian */
	f[20] = FTS__BLK_HEAD;
	f[24 + 3] = 0x3f;            /* length 0x3f000000 */
	getrlimit(RLIMIT_AS, &was);
	lim = (struct rlimit){ 512u << 20, was.rlim_max };
	if (!FTS_TEST_SANITIZED)   /* the sanitizers reserve far more address space */
		setrlimit(RLIMIT_AS, &lim);
	for (int right = 0; right < 2; right++) {
		uint32_t crc = fts__crc32(fts__crc32(0, f, 16), f + 16, 20) + (uint32_t)!right;
		for (int i = 0; i < 4; i++)
			f[16 + 20 + i] = (unsigned char)(crc >> (8 * i));
		fd = mem_file(f, sizeof(f));
		errno = 0;
		assert_null(fts_calib_load(fd));
		assert_int_equal(errno, right ? ENODATA : EBADMSG);
		close(fd);
	}
	setrlimit(RLIMIT_AS, &was);
}

/* The process clock's record, on a simulated machine: every stamp taken while
 * recording converts from the file alone, within its bound. */
static void record_converts_stamps(void **state)
{
	char path[] = "/tmp/fts-record-XXXXXX";
	int fd = mkstemp(path);
	fast_timestamp_t st[3000];
	int64_t truth[3000];
	struct fts_calib *l;
	size_t covered = 0;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(40, 25);
	assert_int_equal(fts_clock_record(path), 0);
	errno = 0;
	assert_int_equal(fts_clock_record(path), -1);   /* already recording */
	assert_int_equal(errno, EBUSY);
	for (int i = 0; i < 3000; i++) {
		st[i] = simc_stamp(&truth[i]);
		simc_advance(1e6L);
		if (i % 100 == 99) {
			assert_int_equal(fts__clock_sample(), 0);
			if (i == 1499)
				simc_step(-1e9L);   /* a step, announced by the sampler */
		}
	}
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	l = fts_calib_load(fd);
	close(fd);
	assert_non_null(l);
	for (int i = 0; i < 3000; i++) {
		int64_t ns, err;
		assert_int_equal(fts_calib_convert(l, st[i], &ns, &err), 0);
		covered += llabs(ns - truth[i]) <= err;
	}
	print_message("3000 stamps over 3 s, a step in the middle: %zu converted within their "
		      "bound from the record\n", covered);
	assert_int_equal(covered, 3000);
	/* the same boot and counter: recording again appends */
	assert_int_equal(fts_clock_record(path), 0);
	simc_advance(100e6L);
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	fts_calib_free(l);
	fts__clock_set_source(NULL);
	unlink(path);
}

/* Do stamps use a counter (not the generic backend, by build or by choice)? */
static int counter_in_use(void)
{
	struct fts_info in = { .size = sizeof(in) };
	assert_int_equal(fts_get_info(&in), 0);
	return strcmp(in.backend, "generic") != 0;
}

/* A file that is not a record of this boot and counter is left alone; without a
 * counter (the generic backend) nothing is recorded and no file is created. */
static void record_refuses_other_files(void **state)
{
	char path[] = "/tmp/fts-other-XXXXXX";
	int fd = mkstemp(path);
	struct stat before, after;
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "precious\n", 9), 9);
	close(fd);
	assert_int_equal(stat(path, &before), 0);
	errno = 0;
	assert_int_equal(fts_clock_record(path), -1);
	/* without a counter there is nothing to record, whatever the file */
	assert_int_equal(errno, counter_in_use() ? EEXIST : ENOTSUP);
	/* not even its times change: nothing was written to it */
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	assert_int_equal(after.st_ctim.tv_nsec, before.st_ctim.tv_nsec);
	assert_int_equal(after.st_ctim.tv_sec, before.st_ctim.tv_sec);
	fd = open(path, O_RDONLY);
	{
		char b[16] = { 0 };
		assert_int_equal(read(fd, b, sizeof(b)), 9);
		assert_string_equal(b, "precious\n");
	}
	close(fd);
	unlink(path);
	errno = 0;
	assert_int_equal(fts_clock_record("/nonexistent-dir/x"), -1);
	assert_int_equal(errno, counter_in_use() ? ENOENT : ENOTSUP);
	if (!counter_in_use()) {
		struct stat sb;
		errno = 0;
		assert_int_equal(fts_clock_record(path), -1);
		assert_int_equal(errno, ENOTSUP);
		assert_int_equal(stat(path, &sb), -1);   /* no file is created */
	}
}

/* A symbolic link at the path is refused (ELOOP), never followed: one another user
 * left in /tmp would have a root process record into a file of root's. The file it
 * names, empty (a record would start in it) or missing (one would be created there),
 * is left as it was, and so is the link. */
static void record_refuses_symlinks(void **state)
{
	char dir[] = "/tmp/fts-link-XXXXXX", target[64], link[64];
	struct stat st;
	int fd;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(target, sizeof(target), "%s/roots-file", dir);
	snprintf(link, sizeof(link), "%s/record", dir);
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(target, link), 0);
	for (int dangling = 0; dangling < 2; dangling++) {
		errno = 0;
		assert_int_equal(fts_clock_record(link), -1);
		assert_int_equal(errno, counter_in_use() ? ELOOP : ENOTSUP);
		if (dangling) {
			assert_int_equal(stat(target, &st), -1);   /* not created */
		} else {
			assert_int_equal(stat(target, &st), 0);
			assert_int_equal(st.st_size, 0);           /* not written */
			unlink(target);
		}
		assert_int_equal(lstat(link, &st), 0);
		assert_true(S_ISLNK(st.st_mode));
	}
	unlink(link);
	rmdir(dir);
}

/* The bytes of the file at path (NULL if there is none); *n their count. */
static unsigned char *file_bytes(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY);
	unsigned char *b;

	if (fd < 0)
		return NULL;
	b = slurp(fd, n);
	close(fd);
	return b;
}

/* In a child: try to record path while the parent records it. 0 when refused with
 * EBUSY, else what went wrong (the child's exit status). First it samples and stops
 * recording: the parent's record, inherited open, must get nothing from it. */
static int child_tries(const char *path)
{
	simc_advance(50e6L);
	if (fts__clock_sample() < 0 || fts_clock_record(NULL) < 0)
		return 3;
	errno = 0;
	if (fts_clock_record(path) == 0)
		return 1;
	return errno == EBUSY ? 0 : 2;
}

/* Stamps taken while recording, converted from the file alone, each within its bound. */
static size_t covered_by(const char *path, const fast_timestamp_t *st, const int64_t *truth,
			 size_t n)
{
	int fd = open(path, O_RDONLY);
	struct fts_calib *l;
	size_t covered = 0;

	assert_true(fd >= 0);
	l = fts_calib_load(fd);
	close(fd);
	assert_non_null(l);
	for (size_t i = 0; i < n; i++) {
		int64_t ns, err;
		if (fts_calib_convert(l, st[i], &ns, &err) == 0)
			covered += llabs(ns - truth[i]) <= err;
	}
	fts_calib_free(l);
	return covered;
}

/* Two processes, one file: whichever records first keeps it. The second's
 * fts_clock_record fails with EBUSY and leaves every byte as it was; the first's record
 * stays whole and converts every stamp it was taken for. */
static void two_recorders(void **state)
{
	char path[] = "/tmp/fts-two-XXXXXX";
	int fd = mkstemp(path), go[2], done[2], status;
	fast_timestamp_t st[400];
	int64_t truth[400];
	unsigned char *before, *after;
	size_t nb, na;
	pid_t pid;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(41, 10);
	/* the parent records; a child (another process, the same open file inherited)
	 * tries the same path */
	assert_int_equal(fts_clock_record(path), 0);
	for (int i = 0; i < 200; i++) {
		st[i] = simc_stamp(&truth[i]);
		simc_advance(5e6L);
		if (i % 20 == 19)
			assert_int_equal(fts__clock_sample(), 0);
	}
	assert_int_equal(fts_clock_record(NULL), 0);
	assert_int_equal(fts_clock_record(path), 0);   /* appends, holds the lock again */
	before = file_bytes(path, &nb);
	assert_non_null(before);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_tries(path));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	after = file_bytes(path, &na);
	assert_int_equal(na, nb);
	assert_memory_equal(after, before, nb);
	free(after);
	free(before);
	for (int i = 200; i < 400; i++) {
		st[i] = simc_stamp(&truth[i]);
		simc_advance(5e6L);
		if (i % 20 == 19)
			assert_int_equal(fts__clock_sample(), 0);
	}
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	assert_int_equal(covered_by(path, st, truth, 400), 400);

	/* the other way round: a child records, the parent is refused until it stops */
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c = 0;
		int rc = fts_clock_record(path) == 0 ? 0 : 3;
		if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
			rc = 4;
		if (!rc && (fts__clock_sample() < 0 || fts_clock_record(NULL) < 0))
			rc = 5;
		_exit(rc);
	}
	{
		char c;
		assert_int_equal(read(go[0], &c, 1), 1);
		before = file_bytes(path, &nb);
		errno = 0;
		assert_int_equal(fts_clock_record(path), -1);
		assert_int_equal(errno, EBUSY);
		after = file_bytes(path, &na);
		assert_int_equal(na, nb);
		assert_memory_equal(after, before, nb);
		free(after);
		free(before);
		assert_int_equal(write(done[1], &c, 1), 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the child stopped: its lock went with it, and the record is whole */
	assert_int_equal(covered_by(path, st, truth, 400), 400);
	assert_int_equal(fts_clock_record(path), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	fts__clock_set_source(NULL);
	unlink(path);
}

/* A call that fails leaves nothing behind: no file it created, and a file it found
 * as it was. */
static void failed_record_leaves_nothing(void **state)
{
	char a[] = "/tmp/fts-a-XXXXXX", b[] = "/tmp/fts-b-XXXXXX";
	int fa = mkstemp(a), fb = mkstemp(b);
	struct stat sb;
	(void)state;

	assert_true(fa >= 0 && fb >= 0);
	close(fa);
	close(fb);
	unlink(a);
	unlink(b);
	simc_use(42, 10);
	/* EBUSY while another file is recorded: B is not created */
	assert_int_equal(fts_clock_record(a), 0);
	errno = 0;
	assert_int_equal(fts_clock_record(b), -1);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(stat(b, &sb), -1);
	assert_int_equal(errno, ENOENT);
	/* and before B is looked at: a B that holds something else is not even read */
	fb = open(b, O_RDWR | O_CREAT | O_EXCL, 0644);
	assert_int_equal(write(fb, "precious\n", 9), 9);
	close(fb);
	errno = 0;
	assert_int_equal(fts_clock_record(b), -1);
	assert_int_equal(errno, EBUSY);
	unlink(b);
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	/* B then records: nothing of the failed call is in its way */
	assert_int_equal(fts_clock_record(b), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	unlink(b);
	/* a start that fails once the file is open (the clock cannot be read): the file it
	 * created is removed, an empty file it found stays empty */
	simc_use(43, 10);
	simc.fail = 1;
	errno = 0;
	assert_int_equal(fts_clock_record(b), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(stat(b, &sb), -1);
	fb = open(b, O_RDWR | O_CREAT | O_EXCL, 0644);
	assert_true(fb >= 0);
	close(fb);
	errno = 0;
	assert_int_equal(fts_clock_record(b), -1);
	assert_int_equal(errno, EIO);
	assert_int_equal(stat(b, &sb), 0);
	assert_int_equal(sb.st_size, 0);
	/* and with the clock back, it records */
	simc.fail = 0;
	assert_int_equal(fts_clock_record(b), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	assert_int_equal(stat(b, &sb), 0);
	assert_true(sb.st_size > 0);
	fts__clock_set_source(NULL);
	unlink(a);
	unlink(b);
}

/* A record with no history yet, header only or one sample (a recorder stopped at
 * once, or killed), says so: ENODATA, "fewer than two samples", not damage. Two
 * samples load. And a recorder goes on with such a file. */
static void too_few_samples(void **state)
{
	struct fts__head h = { .kind = FTS__KIND_OTHER };
	unsigned char s[2 * FTS__SAMPLE_BYTES];
	int fd = memfd_create("fts-few", MFD_CLOEXEC);
	struct fts_calib *c;
	(void)state;

	assert_int_equal(fts__write_header(fd, &h), 0);
	for (int n = 0; n <= 2; n++) {
		if (n) {
			fts__put_sample(s, 1000u * (unsigned)n, 1000000 * n, 1000u * (unsigned)n + 10, 0);
			assert_int_equal(fts__write_block(fd, FTS__BLK_SAMPLES, s, FTS__SAMPLE_BYTES), 0);
		}
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		errno = 0;
		c = fts_calib_load(fd);
		if (n < 2) {
			assert_null(c);
			assert_int_equal(errno, ENODATA);
		} else {
			assert_non_null(c);
			fts_calib_free(c);
		}
		assert_true(lseek(fd, 0, SEEK_END) > 0);
	}
	close(fd);
}

/* The process clock goes on with a record of its own boot and counter that holds its
 * header only (its recorder was killed at once). */
static void record_appends_to_header_only(void **state)
{
	char path[] = "/tmp/fts-one-XXXXXX";
	int fd = mkstemp(path);
	struct fts_calib *l;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(44, 10);
	assert_int_equal(fts_clock_record(path), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	/* keep the header only */
	{
		size_t n;
		unsigned char *b = file_bytes(path, &n);
		assert_non_null(b);
		assert_true(n > HEADER_BYTES + FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES);
		free(b);
		assert_int_equal(truncate(path, HEADER_BYTES), 0);
	}
	fd = open(path, O_RDONLY);
	errno = 0;
	assert_null(fts_calib_load(fd));
	assert_int_equal(errno, ENODATA);
	close(fd);
	assert_int_equal(fts_clock_record(path), 0);   /* not EEXIST: it is a record */
	simc_advance(200e6L);
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	fd = open(path, O_RDONLY);
	l = fts_calib_load(fd);
	close(fd);
	assert_non_null(l);
	fts_calib_free(l);
	fts__clock_set_source(NULL);
	unlink(path);
}

/* The whole blocks of a history file: their ends (offsets) in ends[], and the samples
 * up to each; the count. */
static size_t block_ends(const unsigned char *f, size_t n, size_t *ends, size_t *samples, size_t max)
{
	size_t at = 16, k = 0, ns = 0;

	while (at + FTS__BLOCK_HEAD_BYTES <= n && k < max) {
		uint32_t type = f[at + 4] | f[at + 5] << 8 | (uint32_t)f[at + 6] << 16 | (uint32_t)f[at + 7] << 24;
		uint32_t len = f[at + 8] | f[at + 9] << 8 | (uint32_t)f[at + 10] << 16 | (uint32_t)f[at + 11] << 24;
		size_t end = at + FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
		if (end > n)
			break;
		if (type == FTS__BLK_SAMPLES)
			ns += len / FTS__SAMPLE_BYTES;
		if (type == FTS__BLK_CLKSAMPLES)
			ns += len / FTS__CLKSAMPLE_BYTES;
		ends[k] = end;
		samples[k++] = ns;
		at = end;
	}
	return k;
}

/* A record cut short at any byte (a crash, a full disk, ulimit -f) loads with every
 * whole block before the cut: exactly as the file cut at the end of its last whole
 * block, with every stamp inside converting within its bound; fewer than two samples
 * left: ENODATA. And recording goes on from the last whole block. */
static void record_cut_anywhere(void **state)
{
	char path[] = "/tmp/fts-cut-XXXXXX";
	int fd = mkstemp(path);
	enum { N = 400 };
	fast_timestamp_t st[N];
	int64_t truth[N];
	size_t ends[256], samples[256], nblocks, n, loaded = 0, nodata = 0;
	unsigned char *f;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(45, 10);
	/* 4 s: a sample every 100 ms, a new block every 0.3 s (recording stopped and
	 * started again), a step in the middle (an EVENT block) */
	assert_int_equal(fts_clock_record(path), 0);
	for (int i = 0; i < N; i++) {
		st[i] = simc_stamp(&truth[i]);
		simc_advance(10e6L);
		if (i % 10 == 9)
			assert_int_equal(fts__clock_sample(), 0);
		if (i % 30 == 29) {
			assert_int_equal(fts_clock_record(NULL), 0);
			assert_int_equal(fts_clock_record(path), 0);
		}
		if (i == 200)
			simc_step(5e8L);
	}
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	f = file_bytes(path, &n);
	assert_non_null(f);
	nblocks = block_ends(f, n, ends, samples, 256);
	assert_int_equal(ends[nblocks - 1], n);
	print_message("a record of %zu bytes, %zu blocks, %zu samples\n", n, nblocks,
		      samples[nblocks - 1]);
	for (size_t len = 0; len <= n; len++) {
		size_t k = 0, whole = 16;
		struct fts_calib *c, *ref;
		int fc, fr;

		while (k < nblocks && ends[k] <= len)
			whole = ends[k++];
		/* from a pipe, a block is read whole before it is used: the same */
		fc = len % 5 ? mem_file(f, len) : pipe_file(f, len);
		errno = 0;
		c = fts_calib_load(fc);
		close(fc);
		if (k == 0 || samples[k - 1] < 2) {
			assert_null(c);
			assert_int_equal(errno, ENODATA);
			nodata++;
			continue;
		}
		assert_non_null(c);
		loaded++;
		if (len != whole && len != n)
			fts_calib_free(c), c = NULL;
		if (len == whole) {
			/* the file cut at a block's end: every stamp inside converts within its
			 * bound */
			uint64_t lo, hi;
			assert_int_equal(fts_calib_range(c, &lo, &hi), 0);
			for (int i = 0; i < N; i++) {
				int64_t ns, err;
				if (st[i] < lo || st[i] > hi)
					continue;
				assert_int_equal(fts_calib_convert(c, st[i], &ns, &err), 0);
				assert_true(llabs(ns - truth[i]) <= err);
			}
			fts_calib_free(c);
			continue;
		}
		/* cut inside a block: the same history as the file cut at its last whole
		 * block (checked for every cut of the first few blocks, then one in 7) */
		if (k > 4 && len % 7)
			continue;
		fc = len % 2 ? mem_file(f, len) : pipe_file(f, len);
		c = fts_calib_load(fc);
		close(fc);
		fr = mem_file(f, whole);
		ref = fts_calib_load(fr);
		close(fr);
		assert_non_null(c);
		assert_non_null(ref);
		{
			uint64_t lo, hi;
			assert_int_equal(fts_calib_range(ref, &lo, &hi), 0);
			assert_same(c, ref, lo, hi);
		}
		fts_calib_free(ref);
		fts_calib_free(c);
	}
	print_message("every cut of it: %zu loaded with their whole blocks, %zu with fewer "
		      "than 2 samples (ENODATA)\n", loaded, nodata);
	/* recording goes on after a cut inside a block: from the last whole one */
	{
		size_t cut = ends[nblocks - 2] + 20, m;
		unsigned char *g;
		assert_int_equal(truncate(path, (off_t)cut), 0);
		assert_int_equal(fts_clock_record(path), 0);
		simc_advance(300e6L);
		assert_int_equal(fts__clock_sample(), 0);
		assert_int_equal(fts_clock_record(NULL), 0);
		g = file_bytes(path, &m);
		assert_non_null(g);
		assert_memory_equal(g, f, ends[nblocks - 2]);   /* what was whole stays */
		fd = mem_file(g, m);
		errno = 0;
		{
			struct fts__fileinfo fi;
			int err;
			struct fts_calib *c = fts__load(fd, &fi, &err);
			assert_non_null(c);
			assert_false(fi.cut);
			assert_int_equal(fi.whole, m);
			assert_true(fi.samples > samples[nblocks - 2]);
			fts_calib_free(c);
		}
		close(fd);
		free(g);
	}
	free(f);
	fts__clock_set_source(NULL);
	unlink(path);
}

/* Every single-bit flip of a file: refused (EBADMSG), or a history that converts
 * every counter value exactly as the file's own (none does: every byte is under a
 * checksum, the file header under the first block's). Returns the flips refused. */
static size_t flip_every_bit(unsigned char *good, size_t n, const struct fts_calib *ref)
{
	uint64_t lo, hi;
	size_t refused = 0;

	assert_int_equal(fts_calib_range(ref, &lo, &hi), 0);
	for (size_t i = 0; i < n * 8; i++) {
		struct fts_calib *l;
		int f;
		good[i / 8] ^= (unsigned char)(1u << (i % 8));
		f = mem_file(good, n);
		errno = 0;
		l = fts_calib_load(f);
		close(f);
		good[i / 8] ^= (unsigned char)(1u << (i % 8));
		if (!l) {
			assert_int_equal(errno, EBADMSG);
			refused++;
			continue;
		}
		assert_same(ref, l, lo, hi);
		fts_calib_free(l);
	}
	return refused;
}

/* No single-bit flip changes a conversion without an error: a record of 1.5 s (its
 * blocks' types, lengths, checksums, padding, the file header), and a saved history. */
static void every_bit_flip(void **state)
{
	char path[] = "/tmp/fts-flip-XXXXXX";
	int fd = mkstemp(path);
	unsigned char *good;
	struct fts_calib *ref;
	size_t n, refused;
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(46, 10);
	assert_int_equal(fts_clock_record(path), 0);
	for (int i = 0; i < 15; i++) {
		simc_advance(100e6L);
		assert_int_equal(fts__clock_sample(), 0);
		if (i % 5 == 4) {   /* three SAMPLES blocks, and an EVENT */
			assert_int_equal(fts_clock_record(NULL), 0);
			assert_int_equal(fts_clock_record(path), 0);
		}
		if (i == 7)
			simc_step(2e8L);
	}
	assert_int_equal(fts_clock_record(NULL), 0);
	good = file_bytes(path, &n);
	assert_non_null(good);
	fd = mem_file(good, n);
	ref = fts_calib_load(fd);
	close(fd);
	assert_non_null(ref);
	refused = flip_every_bit(good, n, ref);
	print_message("a record of %zu bytes: %zu of %zu single-bit flips refused\n", n, refused,
		      n * 8);
	assert_int_equal(refused, n * 8);
	fts_calib_free(ref);
	free(good);
	fts__clock_set_source(NULL);
	unlink(path);
	{
		struct daysim d;
		struct fts_calib *c = harsh_history(&d, 40);
		fd = memfd_create("fts-flip", MFD_CLOEXEC);
		assert_int_equal(fts_calib_save(c, fd), 0);
		good = slurp(fd, &n);
		close(fd);
		refused = flip_every_bit(good, n, c);
		print_message("a saved history of %zu bytes: %zu of %zu single-bit flips refused\n",
			      n, refused, n * 8);
		assert_int_equal(refused, n * 8);
		free(good);
		fts_calib_free(c);
		daysim_free(&d);
	}
}

/* Files of format 1 (16-byte block headers, the payload's CRC only), stored as that
 * version wrote them, still load: a record of daysim_ntp(40 samples, seed 5) in 4
 * SAMPLES blocks, and a saved history of daysim_harsh(60, seed 6). Each converts as
 * the history of the same samples. A recorder does not append to one. */
static void format1_loads(void **state)
{
	static const struct { const char *file; int harsh; size_t n; uint64_t seed; } f1[] = {
		{ FTS_TEST_DATA "/record-v1.fth", 0, 40, 5 },
		{ FTS_TEST_DATA "/saved-v1.fth", 1, 60, 6 },
	};
	(void)state;

	for (size_t k = 0; k < 2; k++) {
		struct daysim d;
		struct fts_calib *c = fts_calib_new(), *l;
		struct fts__fileinfo fi;
		uint64_t lo, hi;
		int fd = open(f1[k].file, O_RDONLY), err;

		assert_true(fd >= 0);
		assert_int_equal(f1[k].harsh ? daysim_harsh(&d, f1[k].n, f1[k].seed)
					     : daysim_ntp(&d, f1[k].n, f1[k].seed), 0);
		for (size_t i = 0; i < d.nsamp; i++)
			assert_int_equal(fts_calib_add(c, d.b[i], d.r[i], d.a[i]), 0);
		l = fts__load(fd, &fi, &err);
		close(fd);
		assert_non_null(l);
		assert_int_equal(fi.version, 1);
		assert_int_equal(fi.saved, f1[k].harsh);
		assert_int_equal(fts_calib_range(c, &lo, &hi), 0);
		/* the stored files were written on x86_64, their samples simulated and their
		 * segments computed in its long double: exact only where this one is the same */
		assert_answers(c, l, lo, hi, LDBL_MANT_DIG != 64);
		fts_calib_free(l);
		fts_calib_free(c);
		daysim_free(&d);
	}
}

/* The memory a load takes beyond the history it gives: a record of 300000 harsh
 * samples (9.6 MB) in one block, and the saved history of it, each loaded in a child
 * whose peak resident size is measured against the history's size (its segments).
 * Loading streams (a piece of a block at a time): at most twice the history plus
 * 1 MB. */
static long rss_kb(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld", &pages, &rss), 2);
	fclose(f);
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static void load_streams(void **state)
{
	struct daysim d;
	struct fts__head h = { .kind = FTS__KIND_OTHER };
	struct fts_calib *c;
	size_t n = 300000, len = n * FTS__SAMPLE_BYTES;
	unsigned char *b;
	int fr, fs;
	(void)state;

	if (FTS_TEST_SANITIZED)
		FTS_SKIP("the sanitizers' own memory would be counted");
	c = fts_calib_new();
	b = malloc(len);
	fr = memfd_create("fts-big-record", MFD_CLOEXEC);
	fs = memfd_create("fts-big-saved", MFD_CLOEXEC);
	assert_non_null(b);
	assert_int_equal(daysim_harsh(&d, n, 11), 0);
	for (size_t i = 0; i < d.nsamp; i++) {
		fts__put_sample(b + i * FTS__SAMPLE_BYTES, d.b[i], d.r[i], d.a[i], 0);
		assert_int_equal(fts_calib_add(c, d.b[i], d.r[i], d.a[i]), 0);
	}
	assert_int_equal(fts__write_header(fr, &h), 0);
	assert_int_equal(fts__write_block(fr, FTS__BLK_SAMPLES, b, (uint32_t)len), 0);
	assert_int_equal(fts_calib_save(c, fs), 0);
	free(b);
	daysim_free(&d);
	for (int k = 0; k < 2; k++) {
		int fd = k ? fs : fr, status, p[2];
		long got[3] = { 0 };
		pid_t pid;

		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		assert_int_equal(pipe(p), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct rusage ru;
			long v[3];
			struct fts_calib *l;
			v[0] = rss_kb();
			l = fts_calib_load(fd);
			getrusage(RUSAGE_SELF, &ru);
			v[1] = ru.ru_maxrss - v[0];
			/* the history: its segments, 40 bytes each (a key, a line) */
			v[2] = l ? (long)(fts_calib_count(l) * 40 / 1024) : -1;
			_exit(write(p[1], v, sizeof(v)) == sizeof(v) ? 0 : 1);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(read(p[0], got, sizeof(got)), sizeof(got));
		close(p[0]);
		close(p[1]);
		print_message("%s of %ld kB: loading took %ld kB for a history of %ld kB\n",
			      k ? "saved history" : "record",
			      (long)(lseek(fd, 0, SEEK_END) / 1024), got[1], got[2]);
		assert_true(got[2] > 0);
		assert_true(got[1] <= 2 * got[2] + 1024);
	}
	close(fr);
	close(fs);
	fts_calib_free(c);
}

/* ---- every clock (format 3) ------------------------------------------------------- */

/* A record of every clock on a simulated machine, N stamps 1 ms apart, a sample every
 * 50: a wall-clock set (REALTIME and TAI step), a leap second (REALTIME alone), a sleep
 * with the counter stopped (REALTIME, TAI, BOOTTIME) and one it ran through (every
 * clock but MONOTONIC... each told as the sampler tells it): each clock's histories are
 * told of different steps, so the file must carry each clock's step flag. The stamps
 * and what each clock read at them in st and truth; the record at path, stopped; its
 * saved history (fts_clock_save) in *saved, a memfd at 0. */
enum { CLK_N = 1200 };
static void record_every_clock(char *path, fast_timestamp_t *st,
			       int64_t truth[FTS__NCLK][CLK_N], int *saved)
{
	int fd = mkstemp(path);   /* a fresh name: the record starts the file */

	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	simc_use(47, 30);
	assert_int_equal(fts_clock_record(path), 0);
	for (int i = 0; i < CLK_N; i++) {
		st[i] = simc_stamp(&truth[0][i]);
		for (int k = 1; k < FTS__NCLK; k++)
			truth[k][i] = simc_truth_of(k, simc.t);
		simc_advance(1e6L);
		if (i % 50 != 49)
			continue;
		assert_int_equal(fts__clock_sample(), 0);
		if (i == 299)
			simc_step(-3e8L);
		if (i == 599)
			simc_leap(1);
		if (i == 799)
			simc_suspend(2e9L);
		if (i == 999)
			simc_suspend_counting(1e9L);
	}
	assert_int_equal(fts__clock_sample(), 0);
	assert_int_equal(fts_clock_record(NULL), 0);
	*saved = memfd_create("fts-clocks-saved", MFD_CLOEXEC);
	assert_int_equal(fts_clock_save(*saved), 0);
	assert_int_equal(lseek(*saved, 0, SEEK_SET), 0);
}

static void free_clocks(struct fts_calib *c[FTS__NCLK])
{
	for (int k = 0; k < FTS__NCLK; k++)
		fts_calib_free(c[k]);
}

/* A record and a saved file of the process clock give every clock's history as the
 * process had it: each converts every counter value (the stamps, and across and
 * around the history) to the same ns and bound as the live history, and every stamp
 * to what the live fts_convert_clock gave, within its bound of what that clock read. */
static void every_clock_as_live(void **state)
{
	char path[] = "/tmp/fts-clocks-XXXXXX";
	int fd, fs;
	static fast_timestamp_t st[CLK_N];
	static int64_t truth[FTS__NCLK][CLK_N];
	struct fts_calib *rc[FTS__NCLK], *sv[FTS__NCLK];
	struct fts__fileinfo fi, fs_info;
	uint64_t taken;
	size_t bytes;
	(void)state;

	record_every_clock(path, st, truth, &fs);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fts__load_clocks(fd, FTS__ALL_CLOCKS, rc, &fi), 0);
	bytes = (size_t)lseek(fd, 0, SEEK_END);
	close(fd);
	assert_int_equal(fts__load_clocks(fs, FTS__ALL_CLOCKS, sv, &fs_info), 0);
	assert_int_equal(fi.version, 3);
	assert_int_equal(fi.clocks, FTS__ALL_CLOCKS);
	assert_false(fi.saved);
	assert_int_equal(fs_info.clocks, FTS__ALL_CLOCKS);
	assert_true(fs_info.saved);
	print_message("a record of %" PRIu64 " samples of every clock: %zu bytes (%zu a sample); "
		      "its saved history %ld bytes\n", fi.samples, bytes,
		      (size_t)FTS__CLKSAMPLE_BYTES, (long)lseek(fs, 0, SEEK_END));
	taken = fts__clock_samples_taken();
	for (int k = 0; k < FTS__NCLK; k++) {
		const struct fts_calib *live = fts__clock_history(k);
		size_t covered = 0;
		uint64_t lo, hi;

		assert_non_null(rc[k]);
		assert_non_null(sv[k]);
		assert_int_equal(fts_calib_range(live, &lo, &hi), 0);
		assert_same(live, rc[k], lo, hi);
		assert_same(live, sv[k], lo, hi);
		for (int i = 0; i < CLK_N; i++) {
			int64_t ns, err, n1, e1, n2, e2;
			assert_int_equal(fts_convert_clock(&st[i], fts__clk_id(k), &ns, &err), 0);
			assert_int_equal(fts_calib_convert(rc[k], st[i], &n1, &e1), 0);
			assert_int_equal(fts_calib_convert(sv[k], st[i], &n2, &e2), 0);
			assert_int_equal(n1, ns);
			assert_int_equal(e1, err);
			assert_int_equal(n2, ns);
			assert_int_equal(e2, err);
			covered += llabs(ns - truth[k][i]) <= err;
		}
		print_message("clock %d: %zu knots; %d stamps, %zu within their bound, the same ns "
			      "and bound from the record, the saved file and the live clock\n", k,
			      fts_calib_count(rc[k]), CLK_N, covered);
		assert_int_equal(covered, CLK_N);
	}
	/* the live conversions took no sample: the histories compared are those saved */
	assert_int_equal(fts__clock_samples_taken(), taken);
	/* fts_calib_load gives CLOCK_REALTIME's */
	{
		struct fts_calib *l;
		uint64_t lo, hi;
		assert_int_equal(lseek(fs, 0, SEEK_SET), 0);
		l = fts_calib_load(fs);
		assert_non_null(l);
		assert_int_equal(fts_calib_range(sv[0], &lo, &hi), 0);
		assert_same(sv[0], l, lo, hi);
		fts_calib_free(l);
	}
	free_clocks(rc);
	free_clocks(sv);
	close(fs);
	fts__clock_set_source(NULL);
	unlink(path);
}

/* Files of formats 1 and 2, and fts_calib_save's (one history of no named clock), hold
 * CLOCK_REALTIME's alone: it loads, every other clock is NULL, and the file says so. */
static void old_files_hold_realtime(void **state)
{
	static const char *const files[] = {
		FTS_TEST_DATA "/record-v1.fth", FTS_TEST_DATA "/saved-v1.fth",
		FTS_TEST_DATA "/../fuzz/corpus/fuzz_histfile/record-v2",
		FTS_TEST_DATA "/../fuzz/corpus/fuzz_histfile/saved-v2",
	};
	(void)state;

	for (size_t i = 0; i <= 4; i++) {
		struct fts_calib *c[FTS__NCLK], *l;
		struct fts__fileinfo fi;
		uint64_t lo, hi;
		int fd;

		if (i < 4) {
			fd = open(files[i], O_RDONLY);
		} else {
			struct daysim d;
			struct fts_calib *h = harsh_history(&d, 100);
			fd = memfd_create("fts-plain", MFD_CLOEXEC);
			assert_int_equal(fts_calib_save(h, fd), 0);
			assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
			fts_calib_free(h);
			daysim_free(&d);
		}
		assert_true(fd >= 0);
		assert_int_equal(fts__load_clocks(fd, FTS__ALL_CLOCKS, c, &fi), 0);
		assert_int_equal(fi.version, i < 2 ? 1 : i < 4 ? 2 : 3);
		assert_int_equal(fi.clocks, 1u << FTS__CLK_REALTIME);
		assert_true(fi.plain);
		assert_non_null(c[FTS__CLK_REALTIME]);
		for (int k = 1; k < FTS__NCLK; k++)
			assert_null(c[k]);
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		l = fts_calib_load(fd);
		assert_non_null(l);
		assert_int_equal(fts_calib_range(l, &lo, &hi), 0);
		assert_same(l, c[FTS__CLK_REALTIME], lo, hi);
		fts_calib_free(l);
		free_clocks(c);
		close(fd);
	}
}

/* A record of every clock cut at any byte loads every clock with the whole blocks before
 * the cut, as the file cut at the last one's end; a saved file of every clock cut
 * anywhere (inside a clock's block, or between two) is refused. */
static void every_clock_cut_anywhere(void **state)
{
	char path[] = "/tmp/fts-clkcut-XXXXXX";
	int fs;
	static fast_timestamp_t st[CLK_N];
	static int64_t truth[FTS__NCLK][CLK_N];
	size_t ends[256], samples[256], nblocks, n, loaded = 0;
	unsigned char *f;
	(void)state;

	record_every_clock(path, st, truth, &fs);
	f = file_bytes(path, &n);
	assert_non_null(f);
	nblocks = block_ends(f, n, ends, samples, 256);
	assert_true(nblocks > 2);
	assert_int_equal(ends[nblocks - 1], n);
	for (size_t len = 0; len <= n; len++) {
		struct fts_calib *c[FTS__NCLK], *ref[FTS__NCLK];
		struct fts__fileinfo fi;
		size_t k = 0, whole = 16;
		int fc, rc;

		while (k < nblocks && ends[k] <= len)
			whole = ends[k++];
		fc = len % 5 ? mem_file(f, len) : pipe_file(f, len);
		rc = fts__load_clocks(fc, FTS__ALL_CLOCKS, c, &fi);
		close(fc);
		if (k == 0 || samples[k - 1] < 2) {
			assert_int_equal(rc, -ENODATA);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(fi.cut, len != whole);
		loaded++;
		if (len % 11 == 0 || len == whole) {
			fc = mem_file(f, whole);
			assert_int_equal(fts__load_clocks(fc, FTS__ALL_CLOCKS, ref, NULL), 0);
			close(fc);
			for (int j = 0; j < FTS__NCLK; j++) {
				uint64_t lo, hi;
				assert_non_null(c[j]);
				assert_int_equal(fts_calib_range(ref[j], &lo, &hi), 0);
				assert_same(ref[j], c[j], lo, hi);
			}
			free_clocks(ref);
		}
		free_clocks(c);
	}
	print_message("a record of every clock, %zu bytes in %zu blocks: every cut loaded with its "
		      "whole blocks (%zu with a history)\n", n, nblocks, loaded);
	free(f);
	/* the saved file: every prefix refused, no history before a clock's block starts */
	f = slurp(fs, &n);
	close(fs);
	for (size_t len = 0; len < n; len++) {
		struct fts_calib *c[FTS__NCLK];
		int fc = len % 3 ? mem_file(f, len) : pipe_file(f, len);
		int rc = fts__load_clocks(fc, FTS__ALL_CLOCKS, c, NULL);
		close(fc);
		assert_int_equal(rc, len < HEADER_BYTES + FTS__BLOCK_HEAD_BYTES ? -ENODATA : -EBADMSG);
	}
	free(f);
	fts__clock_set_source(NULL);
	unlink(path);
}

/* Each block's checksums written again (format 2 and later): a change that a writer
 * could have made. */
static void rewrite_crcs(unsigned char *f, size_t n)
{
	size_t at = 16;

	while (at + FTS__BLOCK_HEAD_BYTES <= n) {
		uint32_t len = f[at + 8] | f[at + 9] << 8 | (uint32_t)f[at + 10] << 16 |
			       (uint32_t)f[at + 11] << 24;
		size_t padded = len + (8 - len % 8) % 8;
		uint32_t crc = fts__crc32(0, f + at + FTS__BLOCK_HEAD_BYTES, padded);
		for (int i = 0; i < 4; i++)
			f[at + 12 + i] = (unsigned char)(crc >> (8 * i));
		crc = fts__crc32(at == 16 ? fts__crc32(0, f, 16) : 0, f + at, 20);
		for (int i = 0; i < 4; i++)
			f[at + 20 + i] = (unsigned char)(crc >> (8 * i));
		at += FTS__BLOCK_HEAD_BYTES + padded;
	}
}

static void put_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Loading every clock of f[0..n): 0 or the negative errno. */
static int load_all(const unsigned char *f, size_t n)
{
	struct fts_calib *c[FTS__NCLK];
	int fd = mem_file(f, n), rc = fts__load_clocks(fd, FTS__ALL_CLOCKS, c, NULL);

	close(fd);
	if (rc == 0)
		free_clocks(c);
	return rc;
}

/* Every byte of every clock's data, changed, is refused: in a record's samples (each
 * clock's bracket and reading, the step flags) and in a saved file's blocks (the clock,
 * the set of clocks, the segments). So is per-clock data that breaks the format's rules
 * with its checksums right: a saved file's clocks out of order, repeated, unknown, not
 * naming the same set or one without CLOCK_REALTIME; samples of every clock in a file of
 * format 2, or beside samples of one. */
static void every_clock_corrupt(void **state)
{
	char path[] = "/tmp/fts-clkbad-XXXXXX";
	int fs;
	static fast_timestamp_t st[CLK_N];
	static int64_t truth[FTS__NCLK][CLK_N];
	unsigned char *f, *g;
	size_t n, m, tried = 0, at;
	(void)state;

	record_every_clock(path, st, truth, &fs);
	f = file_bytes(path, &n);
	g = slurp(fs, &m);
	close(fs);
	assert_int_equal(load_all(f, n), 0);
	assert_int_equal(load_all(g, m), 0);
	/* the record's first SAMPLES block of every clock: each byte of its samples */
	for (at = 16; at < n;) {
		uint32_t type = f[at + 4], len = f[at + 8] | f[at + 9] << 8 | (uint32_t)f[at + 10] << 16;
		if (type == FTS__BLK_CLKSAMPLES) {
			for (size_t i = 0; i < len; i++) {
				f[at + FTS__BLOCK_HEAD_BYTES + i] ^= 0x21;
				assert_int_equal(load_all(f, n), -EBADMSG);
				f[at + FTS__BLOCK_HEAD_BYTES + i] ^= 0x21;
				tried++;
			}
			break;
		}
		at += FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
	}
	assert_true(at < n);
	/* every byte of the saved file after its HEAD block */
	for (size_t i = HEADER_BYTES; i < m; i++, tried++) {
		g[i] ^= 0x21;
		assert_int_equal(load_all(g, m), -EBADMSG);
		g[i] ^= 0x21;
	}
	print_message("%zu bytes of every clock's data changed: each refused\n", tried);
	/* the rules, checksums right: the saved file's blocks (clock at +24, set at +28) */
	{
		size_t blk[FTS__NCLK], nb = 0;
		unsigned char *h = malloc(m);
		assert_non_null(h);
		for (at = HEADER_BYTES; at < m && nb < FTS__NCLK;) {
			uint32_t len = g[at + 8] | g[at + 9] << 8 | (uint32_t)g[at + 10] << 16;
			assert_int_equal(g[at + 4], FTS__BLK_CLKSEGS);
			blk[nb++] = at;
			at += FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
		}
		assert_int_equal(nb, FTS__NCLK);
		assert_int_equal(at, m);
		static const struct { int blk, off; uint32_t v; } bad[] = {
			{ 1, 24, 0 },                         /* REALTIME's twice */
			{ 1, 24, 3 },                         /* out of order */
			{ 4, 24, FTS__NCLK },                 /* no such clock */
			{ 2, 28, FTS__ALL_CLOCKS & ~2u },     /* another set */
			{ 0, 28, FTS__ALL_CLOCKS << 1 },      /* a set naming no such clock */
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memcpy(h, g, m);
			put_le32(h + blk[bad[i].blk] + bad[i].off, bad[i].v);
			rewrite_crcs(h, m);
			assert_int_equal(load_all(h, m), -EBADMSG);
		}
		/* the set without REALTIME, in every block, REALTIME's block gone: a saved
		 * file of the other clocks alone */
		{
			size_t first = blk[1];
			memcpy(h, g, HEADER_BYTES);
			memcpy(h + HEADER_BYTES, g + first, m - first);
			for (int b = 1; b < FTS__NCLK; b++)
				put_le32(h + blk[b] - (first - HEADER_BYTES) + 28, FTS__ALL_CLOCKS & ~1u);
			rewrite_crcs(h, m - (first - HEADER_BYTES));
			assert_int_equal(load_all(h, m - (first - HEADER_BYTES)), -EBADMSG);
		}
		/* as written, with its CRCs written again: loads (the rewriting is right) */
		memcpy(h, g, m);
		rewrite_crcs(h, m);
		assert_int_equal(load_all(h, m), 0);
		free(h);
	}
	/* a record of every clock: as format 2, and with a SAMPLES block before its samples */
	{
		unsigned char *h = malloc(n + FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES);
		assert_non_null(h);
		memcpy(h, f, n);
		h[8] = 2;
		rewrite_crcs(h, n);
		assert_int_equal(load_all(h, n), -EBADMSG);
		memcpy(h, f, HEADER_BYTES);
		memset(h + HEADER_BYTES, 0, FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES);
		memcpy(h + HEADER_BYTES, "FBLK", 4);
		h[HEADER_BYTES + 4] = FTS__BLK_SAMPLES;
		h[HEADER_BYTES + 8] = FTS__SAMPLE_BYTES;
		fts__put_sample(h + HEADER_BYTES + FTS__BLOCK_HEAD_BYTES, 1, 1, 2, 0);
		memcpy(h + HEADER_BYTES + FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES, f + HEADER_BYTES,
		       n - HEADER_BYTES);
		rewrite_crcs(h, n + FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES);
		assert_int_equal(load_all(h, n + FTS__BLOCK_HEAD_BYTES + FTS__SAMPLE_BYTES), -EBADMSG);
		free(h);
	}
	free(f);
	free(g);
	fts__clock_set_source(NULL);
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(save_and_load),
		cmocka_unit_test(corrupt_files),
		cmocka_unit_test(hostile_lengths),
		cmocka_unit_test(record_converts_stamps),
		cmocka_unit_test(record_refuses_other_files),
		cmocka_unit_test(record_refuses_symlinks),
		cmocka_unit_test(two_recorders),
		cmocka_unit_test(failed_record_leaves_nothing),
		cmocka_unit_test(too_few_samples),
		cmocka_unit_test(record_appends_to_header_only),
		cmocka_unit_test(record_cut_anywhere),
		cmocka_unit_test(every_bit_flip),
		cmocka_unit_test(format1_loads),
		cmocka_unit_test(load_streams),
		cmocka_unit_test(every_clock_as_live),
		cmocka_unit_test(old_files_hold_realtime),
		cmocka_unit_test(every_clock_cut_anywhere),
		cmocka_unit_test(every_clock_corrupt),
	};
	return fts_test_run(tests, argc, argv);
}
